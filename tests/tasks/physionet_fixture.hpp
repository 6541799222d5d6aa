// Hand-made PhysioNet 2012 data for tests: records, a ustar archive written byte by byte and
// gzipped with zlib, and a small data folder (set-a/ with 40 records, set-b.tar.gz with 8).
#pragma once
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tasks/physionet_record.hpp"
#include "tests/test_util.hpp"

namespace memgrad::test::physionet {

inline const char* const kHeader = "Time,Parameter,Value\n";

inline std::string descriptors(int64_t id, const std::string& age = "70",
                               const std::string& gender = "1", const std::string& height = "175",
                               const std::string& icu = "3", const std::string& weight = "80") {
  return std::string(kHeader) + "00:00,RecordID," + std::to_string(id) + "\n00:00,Age," + age +
         "\n00:00,Gender," + gender + "\n00:00,Height," + height + "\n00:00,ICUType," + icu +
         "\n00:00,Weight," + weight + "\n";
}

inline int hr() { return memgrad::physionet::series_index("HR"); }

// ---- a ustar archive written here --------------------------------------------------------------

inline void put_octal(std::string& h, size_t at, size_t width, uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llo", int(width - 1), (unsigned long long)v);
  std::memcpy(&h[at], buf, width - 1);
  h[at + width - 1] = '\0';
}

// One 512-byte ustar header (type '0' file or '5' directory) with its checksum.
inline std::string tar_header(const std::string& name, size_t size, char type) {
  std::string h(512, '\0');
  std::memcpy(&h[0], name.data(), std::min<size_t>(name.size(), 100));
  put_octal(h, 100, 8, 0644);
  put_octal(h, 108, 8, 0);
  put_octal(h, 116, 8, 0);
  put_octal(h, 124, 12, size);
  put_octal(h, 136, 12, 1326931200);
  h[156] = type;
  std::memcpy(&h[257], "ustar", 6);
  h[263] = '0', h[264] = '0';
  std::memset(&h[148], ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06o", sum);
  std::memcpy(&h[148], buf, 6);
  h[154] = '\0', h[155] = ' ';
  return h;
}

inline std::string tar_of(const std::vector<std::pair<std::string, std::string>>& files,
                          const std::string& folder) {
  std::string tar = tar_header(folder + "/", 0, '5');
  for (const auto& [name, text] : files) {
    tar += tar_header(folder + "/" + name, text.size(), '0');
    tar += text;
    tar.append((512 - text.size() % 512) % 512, '\0');
  }
  tar.append(1024, '\0');
  return tar;
}

inline void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), unsigned(bytes.size())) == int(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// ---- a small data folder -----------------------------------------------------------------------

// Record i of a hand-made set: HR at 00:10 and 03:20 (values depending on i), GCS in every other
// record, Na twice in the same minute; gender missing in record 0.
inline std::string made_record(int64_t id, int i) {
  std::ostringstream r;
  r << descriptors(id, std::to_string(40 + i), i == 0 ? "-1" : std::to_string(i % 2), "170",
                   std::to_string(1 + i % 4), std::to_string(60 + i));
  r << "00:10,HR," << 70 + i << "\n";
  if (i % 2 == 0) r << "01:00,GCS," << 3 + i % 13 << "\n";
  r << "03:20,HR," << 90 + 2 * i << "\n";
  r << "05:00,Na,140\n05:00,Na," << 130 + i % 7 << "\n";
  r << "48:00,Temp," << 36 + 0.1 * i << "\n";
  return r.str();
}

struct MadeData {
  std::string dir;
  std::vector<int64_t> a_ids, b_ids;
  std::vector<int> a_deaths, b_deaths;
};

// set-a: 40 records in a folder (every 4th a death); set-b: 8 in set-b.tar.gz (2 deaths).
inline MadeData make_data(const TempDir& tmp) {
  MadeData m;
  m.dir = tmp.path.string();
  std::string outcomes_a = "RecordID,SAPS-I,SOFA,Length_of_stay,Survival,In-hospital_death\n";
  for (int i = 0; i < 40; ++i) {
    const int64_t id = 132001 + i;
    const int death = i % 4 == 0;
    tmp.write("set-a/" + std::to_string(id) + ".txt", made_record(id, i));
    outcomes_a += std::to_string(id) + "," + std::to_string(10 + i % 9) + ",3,9," +
                  (death ? "5" : "-1") + "," + std::to_string(death) + "\n";
    m.a_ids.push_back(id);
    m.a_deaths.push_back(death);
  }
  tmp.write("Outcomes-a.txt", outcomes_a);
  std::vector<std::pair<std::string, std::string>> files;
  std::string outcomes_b = "RecordID,SAPS-I,SOFA,Length_of_stay,Survival,In-hospital_death\n";
  for (int i = 0; i < 8; ++i) {
    const int64_t id = 142001 + i;
    const int death = i % 4 == 1;
    files.emplace_back(std::to_string(id) + ".txt", made_record(id, i + 3));
    outcomes_b += std::to_string(id) + ",-1,-1,-1,-1," + std::to_string(death) + "\n";
    m.b_ids.push_back(id);
    m.b_deaths.push_back(death);
  }
  write_gz(m.dir + "/set-b.tar.gz", tar_of(files, "set-b"));
  tmp.write("Outcomes-b.txt", outcomes_b);
  return m;
}

}  // namespace memgrad::test::physionet
