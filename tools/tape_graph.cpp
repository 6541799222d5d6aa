#include "tools/tape_graph.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "engine/error.hpp"

extern char** environ;

namespace memgrad::cli {
namespace {

bool under(const std::string& scope, const std::string& prefix) {
  return scope == prefix ||
         (scope.size() > prefix.size() && scope.compare(0, prefix.size(), prefix) == 0 &&
          scope[prefix.size()] == '/');
}

std::string shape_text(const Shape& s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// A number for a label: 4 significant digits.
std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// Text inside a DOT double-quoted string: quotes and backslashes escaped, line breaks as \n.
std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The scopes as a tree, for nested clusters: each scope path's children and nodes.
struct ScopeTree {
  std::map<std::string, std::vector<std::string>> children;  // "" is the root
  std::map<std::string, std::vector<size_t>> nodes;          // indices into graph.nodes

  void add_path(const std::string& path) {
    if (path.empty() || children.count(path)) return;
    const size_t slash = path.rfind('/');
    const std::string parent = slash == std::string::npos ? "" : path.substr(0, slash);
    add_path(parent);
    children[parent].push_back(path);
    children[path];  // present, maybe childless
  }
};

// A scope's own label: its last name ("allocation" of "enc1/t0/memory/allocation").
std::string last_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void write_node(std::ostream& out, const TapeGraph::Node& n, const std::string& indent) {
  const bool param = n.op == "parameter";
  std::string label = (param ? n.param : n.op) + "\n" + shape_text(n.shape);
  label += "\n|v| " + short_number(n.value_norm);
  label += n.grad_norm ? "  |g| " + short_number(*n.grad_norm) : "  |g| -";
  // Parameters yellow, other leaves grey, ops blue; a boundary node (--only) dashed.
  const char* fill = param ? "#fff3b0" : n.leaf ? "#e6e6e6" : "#dbe9ff";
  std::string style = n.leaf ? "filled" : "rounded,filled";
  if (n.boundary) style += ",dashed";
  std::string tooltip = "node " + std::to_string(n.id) + " " + n.op;
  if (!n.scope.empty()) tooltip += " in " + n.scope;
  out << indent << "n" << n.id << " [label=\"" << dot_escape(label) << "\", tooltip=\""
      << dot_escape(tooltip) << "\", shape=" << (n.leaf ? "ellipse" : "box") << ", style=\""
      << style << "\", fillcolor=\"" << fill << "\"];\n";
}

void write_cluster(std::ostream& out, const TapeGraph& graph, const ScopeTree& tree,
                   const std::string& path, const std::string& indent, int& counter) {
  const bool root = path.empty();
  const std::string inner = root ? indent : indent + "  ";
  if (!root) {
    out << indent << "subgraph cluster_" << counter++ << " {\n"
        << inner << "label=\"" << dot_escape(last_name(path)) << "\"; tooltip=\""
        << dot_escape(path) << "\"; style=\"rounded\"; color=\"#7a8ca8\"; fontsize=11;\n";
  }
  if (auto it = tree.nodes.find(path); it != tree.nodes.end())
    for (size_t k : it->second) write_node(out, graph.nodes[k], inner);
  if (auto it = tree.children.find(path); it != tree.children.end())
    for (const std::string& child : it->second)
      write_cluster(out, graph, tree, child, inner, counter);
  if (!root) out << indent << "}\n";
}

// The scope a node is drawn in: parameters (shared by every step) stand outside all clusters.
std::string cluster_of(const TapeGraph::Node& n) { return n.op == "parameter" ? "" : n.scope; }

}  // namespace

TapeGraph tape_graph(const Tape& tape, const std::string& only) {
  const NodeId count = NodeId(tape.size());
  std::vector<char> keep(size_t(count), 0), boundary(size_t(count), 0);
  for (NodeId id = 0; id < count; ++id)
    keep[size_t(id)] = only.empty() || under(tape.scope_path(id), only);
  if (!only.empty()) {
    bool any = false;
    for (NodeId id = 0; id < count; ++id) {
      if (!keep[size_t(id)]) continue;
      any = true;
      const Node& n = tape.node(id);
      for (int k = 0; k < n.num_inputs; ++k) {
        const NodeId in = tape.input_id(id, k);
        if (!keep[size_t(in)]) boundary[size_t(in)] = 1;
      }
    }
    if (!any) {
      std::set<std::string> scopes;
      for (NodeId id = 0; id < count && scopes.size() < 12; ++id) {
        const std::string& s = tape.scope_path(id);
        if (s.empty()) continue;
        const size_t cut = s.find('/', s.find('/') + 1);  // two levels: "enc1/t0"
        scopes.insert(s.substr(0, cut));
      }
      std::string known;
      for (const std::string& s : scopes) known += (known.empty() ? "" : ", ") + s;
      fail("--only '", only, "' matches no part of the tape",
           known.empty() ? std::string(" (this model names no parts)")
                         : " (parts include: " + known + ")");
    }
  }
  TapeGraph graph;
  for (NodeId id = 0; id < count; ++id) {
    if (!keep[size_t(id)] && !boundary[size_t(id)]) continue;
    const Node& n = tape.node(id);
    TapeGraph::Node g;
    g.id = id;
    g.op = n.op->name;
    g.scope = tape.scope_path(id);
    if (n.param) g.param = n.param->name;
    g.shape = tape.value(id).shape();
    g.value_norm = l2_norm_of(tape.value(id));
    if (tape.has_grad(id)) g.grad_norm = l2_norm_of(tape.live_grad(id));
    g.leaf = n.op->leaf;
    g.boundary = !keep[size_t(id)];
    graph.nodes.push_back(std::move(g));
    if (!keep[size_t(id)]) continue;  // a boundary node's own inputs are outside the cut
    for (int k = 0; k < n.num_inputs; ++k) graph.edges.push_back({tape.input_id(id, k), id, k});
  }
  return graph;
}

nlohmann::json tape_graph_json(const TapeGraph& graph) {
  nlohmann::json nodes = nlohmann::json::array(), edges = nlohmann::json::array();
  std::map<std::string, std::vector<NodeId>> clusters;
  for (const TapeGraph::Node& n : graph.nodes) {
    nlohmann::json j = {
        {"id", n.id},
        {"op", n.op},
        {"scope", n.scope},
        {"shape", std::vector<int64_t>(n.shape.dims.begin(), n.shape.dims.begin() + n.shape.rank)},
        {"value_norm", n.value_norm},
        {"grad_norm", n.grad_norm ? nlohmann::json(*n.grad_norm) : nullptr},
        {"leaf", n.leaf},
        {"boundary", n.boundary}};
    if (!n.param.empty()) j["param"] = n.param;
    nodes.push_back(std::move(j));
    if (const std::string c = cluster_of(n); !c.empty()) clusters[c].push_back(n.id);
  }
  for (const TapeGraph::Edge& e : graph.edges)
    edges.push_back({{"from", e.from}, {"to", e.to}, {"input", e.input}});
  nlohmann::json cl = nlohmann::json::array();
  for (const auto& [name, ids] : clusters) cl.push_back({{"name", name}, {"nodes", ids}});
  return {{"nodes", nodes}, {"edges", edges}, {"clusters", cl}};
}

std::string tape_graph_dot(const TapeGraph& graph, const std::string& title) {
  ScopeTree tree;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const std::string c = cluster_of(graph.nodes[k]);
    tree.add_path(c);
    tree.nodes[c].push_back(k);
  }
  std::ostringstream out;
  out << "digraph tape {\n"
         "  graph [rankdir=TB, fontname=\"Helvetica\", labelloc=t, fontsize=14, label=\""
      << dot_escape(title) << "\"];\n"
      << "  node [fontname=\"Helvetica\", fontsize=10];\n"
         "  edge [color=\"#555555\", arrowsize=0.6];\n";
  int counter = 0;
  write_cluster(out, graph, tree, "", "  ", counter);
  for (const TapeGraph::Edge& e : graph.edges) out << "  n" << e.from << " -> n" << e.to << ";\n";
  out << "}\n";
  return out.str();
}

std::string find_dot_program() {
  if (const char* forced = std::getenv("MEMGRAD_DOT")) return forced;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/dot";
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return "";
}

namespace {

// A temporary file that removes itself.
struct TempFile {
  std::string path;
  int fd = -1;
  explicit TempFile(const char* pattern) {
    std::string p = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/" +
                    pattern + "XXXXXX";
    fd = ::mkstemp(p.data());
    MG_CHECK(fd >= 0, "cannot create a temporary file in ", p.substr(0, p.rfind('/')));
    path = p;
  }
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    ::unlink(path.c_str());
  }
  std::string read() const {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

}  // namespace

std::string render_svg(const std::string& dot_text) {
  const std::string dot = find_dot_program();
  MG_CHECK(!dot.empty(),
           "SVG output needs Graphviz's `dot` program, which is not installed (Debian: apt-get "
           "install graphviz, as tools/setup.sh does); --format dot writes the graph for another "
           "renderer, --format json its nodes and edges");
  TempFile in("memgrad-tape-"), out("memgrad-svg-"), err("memgrad-dot-err-");
  {
    std::ofstream f(in.path, std::ios::binary);
    f << dot_text;
    MG_CHECK(f.good(), "cannot write the graph to ", in.path);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd, 2);
  std::string arg0 = dot, arg1 = "-Tsvg", arg2 = in.path;
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, dot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  MG_CHECK(spawned == 0, "cannot run Graphviz's dot (", dot, "): ", std::strerror(spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  MG_CHECK(ok, "Graphviz's dot (", dot, ") failed",
           WIFEXITED(status) ? " with exit code " + std::to_string(WEXITSTATUS(status))
                             : std::string(" (killed by a signal)"),
           ": ", err.read());
  return out.read();
}

}  // namespace memgrad::cli
