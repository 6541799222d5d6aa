#include "tools/ranks.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/error.hpp"

#if defined(MEMGRAD_HAVE_MPI)
#include <mpi.h>
#endif

namespace memgrad::cli {
namespace {

// The number of processes the launcher started, from its environment (Open MPI, then the PMI
// variables of MPICH and Slurm): 1 when there is none.
long launched_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(name)) return std::max(1L, std::strtol(v, nullptr, 10));
  return 1;
}

#if defined(MEMGRAD_HAVE_MPI)
class MpiRanks final : public Ranks {
 public:
  MpiRanks() {
    int provided = 0;
    // Only the main thread calls MPI; TBB's workers never do.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiRanks() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_gather(const double* mine, size_t n, double* out) override {
    MPI_Allgather(mine, int(n), MPI_DOUBLE, out, int(n), MPI_DOUBLE, MPI_COMM_WORLD);
  }

  // Rank c owns elements [c n / R, (c + 1) n / R). All-to-all: each rank sends every owner its
  // part; the owner adds the R parts in rank order; all-gather: every rank gets every sum.
  void sum_in_rank_order(void* data, size_t n, DType dtype) override {
    const size_t R = size_t(size_), elem = dtype_size(dtype);
    counts_.resize(R);
    displs_.resize(R);
    for (size_t c = 0; c < R; ++c) {
      displs_[c] = int(c * n / R);
      counts_[c] = int((c + 1) * n / R) - displs_[c];
    }
    const size_t mine = size_t(counts_[size_t(rank_)]);
    recv_.resize(std::max<size_t>(1, R * mine * elem));
    recv_counts_.assign(R, int(mine));
    recv_displs_.resize(R);
    for (size_t r = 0; r < R; ++r) recv_displs_[r] = int(r * mine);
    const MPI_Datatype type = dtype == DType::f32 ? MPI_FLOAT : MPI_DOUBLE;
    MPI_Alltoallv(data, counts_.data(), displs_.data(), type, recv_.data(), recv_counts_.data(),
                  recv_displs_.data(), type, MPI_COMM_WORLD);
    MG_DISPATCH(dtype, T, {
      const T* parts = reinterpret_cast<const T*>(recv_.data());
      T* sum = static_cast<T*>(data) + displs_[size_t(rank_)];
      std::copy_n(parts, mine, sum);
      for (size_t r = 1; r < R; ++r)
        for (size_t i = 0; i < mine; ++i) sum[i] += parts[r * mine + i];
    });
    MPI_Allgatherv(MPI_IN_PLACE, 0, type, data, counts_.data(), displs_.data(), type,
                   MPI_COMM_WORLD);
    bytes_moved_ += 2 * (n - mine) * elem * 2;  // sent and received, in both phases
  }

  std::string broadcast(const std::string& text) override {
    unsigned long long length = text.size();
    MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? text : std::string(size_t(length), '\0');
    MPI_Bcast(out.data(), int(length), MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
  }

  [[noreturn]] void abort(const std::string& message, int exit_code) override {
    std::fprintf(stderr, "memgrad train (rank %d of %d): %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // (MPI_Abort does not return)
  }

 private:
  int rank_ = 0, size_ = 1;
  std::vector<int> counts_, displs_, recv_counts_, recv_displs_;
  std::vector<char> recv_;
};
#endif

}  // namespace

bool Ranks::any(bool flag) {
  flags_.resize(size_t(size()));  // kept: no allocation per step
  const double mine = flag ? 1 : 0;
  all_gather(&mine, 1, flags_.data());
  return std::any_of(flags_.begin(), flags_.end(), [](double v) { return v != 0; });
}

bool built_with_mpi() {
#if defined(MEMGRAD_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Ranks> join_ranks() {
  const long processes = launched_processes();
  if (processes <= 1) return nullptr;
#if defined(MEMGRAD_HAVE_MPI)
  return std::make_unique<MpiRanks>();
#else
  fail("started as one of ", processes,
       " processes (mpirun), but this memgrad was built without MPI: each process would train "
       "alone and write the same run directory. Install libopenmpi-dev (tools/setup.sh does) and "
       "rebuild, or run one process");
#endif
}

}  // namespace memgrad::cli
