// memgrad inspect --tape --format and --grad-flow: the tape as a graph (nodes, edges, clusters of
// the model parts), gradient norms through the steps; memgrad gradcheck --model --verbose.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "engine/json_text.hpp"
#include "engine/parameter.hpp"
#include "engine/tape.hpp"
#include "ops/ops.hpp"
#include "tests/tools/cli_run.hpp"
#include "tools/tape_graph.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::run;

namespace {

// y = sum(tanh(x W)) with the product and tanh under "layer", tanh under "layer/act".
struct TinyTape {
  ParameterSet params{DType::f64};
  Tape tape;
  Var x, w, xw, y, loss;
  TinyTape() {
    Rng rng(1);
    Parameter& W = params.add("layer.W", Shape{3, 2});
    W.value.fill(0.5);
    tape.set_record_scopes(true);
    Tensor ones = Tensor::zeros(Shape{1, 3}, DType::f64);
    ones.fill(1.0);
    x = tape.input(ones);
    {
      const TapeScope layer(tape, "layer");
      w = tape.param(W);
      xw = matmul(x, w);
      const TapeScope act(tape, "act");
      y = tanh(xw);
    }
    loss = sum(y);
    tape.backward(loss);
  }
};

const nlohmann::json* node(const nlohmann::json& g, int64_t id) {
  for (const auto& n : g.at("nodes"))
    if (n.at("id") == id) return &n;
  return nullptr;
}

bool has_edge(const nlohmann::json& g, int64_t from, int64_t to) {
  for (const auto& e : g.at("edges"))
    if (e.at("from") == from && e.at("to") == to) return true;
  return false;
}

Words tiny_dnc(Words extra) {
  Words w = {"--model",     "dnc", "--task",      "sum2seq",  "--embedding",    "4",
             "--hidden",    "6",   "--word-size", "3",        "--memory-slots", "5",
             "--threads",   "1",   "--seed",      "3",        "--test-samples", "5",
             "--test-lmax", "4",   "--input",     "3 1 / 4 1"};
  w.insert(w.end(), extra.begin(), extra.end());
  return w;
}

}  // namespace

TEST_CASE("tape graph: nodes, data-flow edges, scopes as clusters, parameters outside") {
  TinyTape t;
  const nlohmann::json g = tape_graph_json(tape_graph(t.tape));
  REQUIRE(g.at("nodes").size() == t.tape.size());
  CHECK(g.at("nodes").size() == 5);  // x, W, matmul, tanh, sum
  CHECK(has_edge(g, t.x.id, t.xw.id));
  CHECK(has_edge(g, t.w.id, t.xw.id));
  CHECK(has_edge(g, t.xw.id, t.y.id));
  CHECK(has_edge(g, t.y.id, t.loss.id));
  CHECK(g.at("edges").size() == 4);
  CHECK(node(g, t.w.id)->at("param") == "layer.W");
  CHECK(node(g, t.w.id)->at("leaf") == true);
  CHECK(node(g, t.xw.id)->at("scope") == "layer");
  CHECK(node(g, t.y.id)->at("scope") == "layer/act");
  CHECK(node(g, t.loss.id)->at("scope") == "");
  CHECK(node(g, t.xw.id)->at("shape") == nlohmann::json::array({1, 2}));
  // |x W| = |(1.5, 1.5)|; d sum(tanh) / d tanh = ones: |g| = sqrt(2).
  CHECK(node(g, t.xw.id)->at("value_norm").get<double>() == doctest::Approx(1.5 * std::sqrt(2)));
  CHECK(node(g, t.y.id)->at("grad_norm").get<double>() == doctest::Approx(std::sqrt(2)));
  CHECK(node(g, t.x.id)->at("grad_norm").is_null());  // an input without requires_grad
  // Clusters: one per scope holding nodes; the parameter (used by every step) in none.
  const nlohmann::json clusters = g.at("clusters");
  REQUIRE(clusters.size() == 2);
  CHECK(clusters[0] == nlohmann::json{{"name", "layer"}, {"nodes", {t.xw.id}}});
  CHECK(clusters[1] == nlohmann::json{{"name", "layer/act"}, {"nodes", {t.y.id}}});
  // DOT: every node, nested clusters, every edge.
  const std::string dot = tape_graph_dot(tape_graph(t.tape), "tiny");
  CHECK(dot.find("subgraph cluster_0 {") != std::string::npos);
  CHECK(dot.find("label=\"act\"") != std::string::npos);
  std::ostringstream edge;  // (streamed: g++ 12 warns falsely on "n" + std::to_string)
  edge << "n" << t.w.id << " -> n" << t.xw.id << ";";
  CHECK(dot.find(edge.str()) != std::string::npos);
  CHECK(dot.find("label=\"layer.W\\n") != std::string::npos);
}

TEST_CASE("tape graph: --only cuts to one part and the nodes it reads") {
  TinyTape t;
  const nlohmann::json g = tape_graph_json(tape_graph(t.tape, "layer/act"));
  REQUIRE(g.at("nodes").size() == 2);  // tanh, and the product it reads
  CHECK(node(g, t.y.id)->at("boundary") == false);
  CHECK(node(g, t.xw.id)->at("boundary") == true);
  CHECK(g.at("edges").size() == 1);
  CHECK(tape_graph_json(tape_graph(t.tape, "layer")).at("nodes").size() == 4);  // + x, W
  // "lay" is not a part: prefixes match whole names.
  CHECK_THROWS_WITH_AS(tape_graph(t.tape, "lay"),
                       doctest::Contains("--only 'lay' matches no part of the tape (parts "
                                         "include: layer, layer/act)"),
                       Error);
}

TEST_CASE("tape scopes cost nothing when off and do not change values") {
  Tape tape;
  const Var x = tape.input(Tensor::zeros(Shape{2}, DType::f64));
  {
    const TapeScope s(tape, "a"), step(tape, "t", 3);
    const Var y = tanh(x);
    CHECK(tape.scope_path(y.id).empty());  // not recording
  }
  tape.set_record_scopes(true);
  {
    const TapeScope s(tape, "a"), step(tape, "t", 3);
    CHECK(tape.scope_path(tanh(x).id) == "a/t3");
  }
  CHECK(tape.scope_path(tanh(x).id).empty());  // closed
}

TEST_CASE("inspect --tape --format json: a DNC step's parts as clusters, one node per tape node") {
  const test::Run text = run(cmd_inspect, tiny_dnc({"--tape"}));
  REQUIRE(text.code == 0);
  const size_t at = text.out.find("\ntape (");
  REQUIRE(at != std::string::npos);
  const long tape_nodes = std::stol(text.out.substr(at + 7));

  const test::Run r = run(cmd_inspect, tiny_dnc({"--tape", "--format", "json"}));
  REQUIRE(r.code == 0);
  const nlohmann::json g = parse_json(r.out);
  CHECK(long(g.at("nodes").size()) == tape_nodes);
  std::set<std::string> clusters;
  for (const auto& c : g.at("clusters")) clusters.insert(c.at("name").get<std::string>());
  // Two encoder steps of 2 numbers and an end marker each: steps t0 to t5, then the decoder.
  for (const char* c : {"enc/t0/controller", "enc/t0/interface", "enc/t0/memory/usage",
                        "enc/t0/memory/allocation", "enc/t0/memory/write", "enc/t0/memory/link",
                        "enc/t0/memory/read", "enc/t5/memory/allocation", "dec/t0"}) {
    CAPTURE(c);
    CHECK(clusters.count(c) == 1);
  }
  // The allocation weighting feeds the write weighting: an edge from the allocation part into
  // the write part at the same step, carrying a gradient back.
  std::map<int64_t, std::string> scope;
  for (const auto& n : g.at("nodes")) scope[n.at("id").get<int64_t>()] = n.at("scope");
  int alloc_to_write = 0;
  for (const auto& e : g.at("edges"))
    if (scope[e.at("from")] == "enc/t1/memory/allocation" &&
        scope[e.at("to")] == "enc/t1/memory/write")
      ++alloc_to_write;
  CHECK(alloc_to_write == 1);
  int params = 0;
  for (const auto& n : g.at("nodes"))
    if (n.contains("param")) {
      ++params;
      CHECK(n.at("grad_norm").get<double>() > 0);
    }
  CHECK(params > 5);

  // --only: the allocation of step 1 and what it reads (the usage it sorts).
  const test::Run part = run(
      cmd_inspect, tiny_dnc({"--tape", "--format", "json", "--only", "enc/t1/memory/allocation"}));
  REQUIRE(part.code == 0);
  const nlohmann::json p = parse_json(part.out);
  for (const auto& n : p.at("nodes")) {
    const std::string s = n.at("scope");
    CHECK((s == "enc/t1/memory/allocation" || n.at("boundary") == true));
  }
  CHECK(p.at("nodes").size() < g.at("nodes").size() / 10);

  // DOT text (its parsing by Graphviz: tests/scripts/tape_graph.sh).
  const test::Run dot = run(cmd_inspect, tiny_dnc({"--tape", "--format", "dot"}));
  REQUIRE(dot.code == 0);
  CHECK(dot.out.rfind("digraph tape {", 0) == 0);
  CHECK(dot.out.find("label=\"allocation\"") != std::string::npos);

  // Bad usage.
  CHECK(run(cmd_inspect, tiny_dnc({"--format", "json"})).error.find("give it with --tape") !=
        std::string::npos);
  CHECK(run(cmd_inspect, tiny_dnc({"--tape", "--format", "png"})).error ==
        "--format must be dot, svg or json, got 'png'");
  const test::Run none = run(cmd_inspect, tiny_dnc({"--tape", "--format", "json", "--only", "x"}));
  CHECK(none.code == 2);
  CHECK(none.error.find("parts include: dec, dec/t0, dec/t1, enc/t0") != std::string::npos);
}

TEST_CASE("inspect --grad-flow: the loss's gradient through every step's state and memory") {
  const test::Run r = run(cmd_inspect, tiny_dnc({"--grad-flow", "--json"}));
  REQUIRE(r.code == 0);
  const nlohmann::json flow = parse_json(r.out).at("grad_flow");
  const nlohmann::json* memory = nullptr;
  for (const auto& s : flow.at("series"))
    if (s.at("name") == "enc/state/memory") memory = &s;
  REQUIRE(memory != nullptr);
  CHECK(memory->at("steps") == nlohmann::json::array({0, 1, 2, 3, 4, 5}));
  // Every step's memory is read later (the next steps, the decoder): a gradient reaches each.
  for (const auto& g : memory->at("grad_norm")) {
    REQUIRE(g.is_number());
    CHECK(g.get<double>() > 0);
    CHECK(std::isfinite(g.get<double>()));
  }
  CHECK(flow.at("parameters").size() > 5);
  int reached = 0;  // every parameter but those of unused paths gets a gradient
  for (const auto& p : flow.at("parameters")) {
    CHECK(std::isfinite(p.at("grad_norm").get<double>()));
    reached += p.at("grad_norm").get<double>() > 0;
  }
  CHECK(reached > 5);

  const test::Run text = run(cmd_inspect, tiny_dnc({"--grad-flow"}));
  CHECK(text.out.find("gradient flow: |d loss / d value| per step") != std::string::npos);
  CHECK(text.out.find("  enc/state/memory\n    t0 ") != std::string::npos);
}

TEST_CASE("gradcheck --model --verbose: the worst element of each parameter, both values") {
  const test::Run r = run(cmd_gradcheck, {"--model", "dnc", "--verbose", "--threads", "1"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("worst at") != std::string::npos);
  // One row per parameter under each variant: name, element count, index, analytic, numeric.
  const size_t row = r.out.find("    enc.interface.w ");
  REQUIRE(row != std::string::npos);
  std::istringstream in(r.out.substr(row));
  std::string name;
  size_t elements = 0, worst = 0;
  double analytic = 0, numeric = 0, abs_err = 0;
  in >> name >> elements >> worst >> analytic >> numeric >> abs_err;
  CHECK(elements > 0);
  CHECK(worst < elements);
  CHECK(std::fabs(analytic - numeric) == doctest::Approx(abs_err).epsilon(0.01));
  CHECK(abs_err <= 1e-4 * std::max(std::fabs(analytic), 5e-6) * 1000);
}
