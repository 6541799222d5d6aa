// The tape of one forward and backward pass as a graph, for `memgrad inspect --tape --format
// dot|svg|json`: one node per op with its output shape and value and gradient norms, parameters
// and inputs as leaves, an edge from each input to the op that reads it (data-flow order), and
// the nodes grouped by the model part that recorded them (Tape::scope_path, e.g.
// "enc1/t0/memory/allocation"), drawn as nested clusters. Graphviz's `dot` program lays it out.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/tape.hpp"

namespace memgrad::cli {

struct TapeGraph {
  struct Node {
    NodeId id = -1;                   // the tape's node index
    std::string op;                   // op name ("parameter", "input", "constant" for leaves)
    std::string scope;                // the recording model part, "" outside every scope
    std::string param;                // the parameter's name, for parameter leaves
    Shape shape;                      // the node's value
    double value_norm = 0;            // L2 norm of the value
    std::optional<double> grad_norm;  // L2 norm of the loss's gradient, when one reached it
    bool leaf = false;                // parameter, input or constant
    bool boundary = false;  // (--only) outside the part, shown because a node of it reads it
  };
  std::vector<Node> nodes;  // in tape order
  struct Edge {
    NodeId from = -1, to = -1;
    int input = 0;  // which input of `to`
  };
  std::vector<Edge> edges;
};

// The graph of `tape` after its backward pass. With `only` non-empty, the nodes whose scope is
// `only` or lies under it ("enc1/t0" takes "enc1/t0/memory/..."), and the nodes they read
// (marked boundary); an Error names `only` and a few of the tape's scopes when none matches.
TapeGraph tape_graph(const Tape& tape, const std::string& only = "");

// {"nodes": [{"id", "op", "scope", "shape", "value_norm", "grad_norm" (null: none), "leaf",
// "boundary", "param"?}], "edges": [{"from", "to", "input"}], "clusters": [{"name", "nodes"}]}:
// one cluster per scope path that holds nodes, parameters kept out of clusters.
nlohmann::json tape_graph_json(const TapeGraph& graph);

// The graph in Graphviz's DOT language: ops as boxes (op, shape, |value|, |grad|), parameters as
// yellow ellipses (name, shape), inputs and constants grey, boundary nodes dashed; every scope a
// cluster nested in its parent's, labelled with its last name; edges drawn top to bottom.
std::string tape_graph_dot(const TapeGraph& graph, const std::string& title);

// The path of Graphviz's `dot` program: $MEMGRAD_DOT when set (empty: none), else the first `dot`
// on PATH; "" when there is none.
std::string find_dot_program();

// Renders DOT text to SVG with Graphviz's `dot`; an Error says how to install it when it is absent
// and gives dot's own message when it fails.
std::string render_svg(const std::string& dot_text);

}  // namespace memgrad::cli
