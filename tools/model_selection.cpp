// Model selection over epochs (see model_selection.hpp).
#include "tools/model_selection.hpp"

#include <filesystem>

#include "engine/error.hpp"

namespace memgrad::cli {

BestEpoch::BestEpoch(const RunDir& dir, Trainer& trainer)
    : dir_(dir), trainer_(trainer), metric_(trainer.task().selection_metric()) {
  if (!active() || !std::filesystem::exists(dir_.best_info())) return;
  nlohmann::json j = dir_.read_json(dir_.best_info());
  MG_CHECK(j.is_object() && j.contains("value") && j["value"].is_number() && j.contains("epoch"),
           dir_.best_info(), ": not a best-epoch record (expected epoch, step, metric, value)");
  MG_CHECK(std::filesystem::exists(dir_.best()), dir_.best_info(), " has no ", dir_.best());
  best_ = j;
}

nlohmann::json BestEpoch::end_epoch(int64_t epoch, int64_t next_step) {
  if (!active()) return nlohmann::json::object();
  const std::optional<double> score = trainer_.selection_score();
  if (!score) return {{metric_, nullptr}, {"best", false}};
  const bool better = !best_ || *score > (*best_)["value"].get<double>();
  if (better) {
    trainer_.save_checkpoint(dir_.best(), next_step, LogState{});  // parameters only are read back
    best_ = nlohmann::json{
        {"epoch", epoch}, {"step", next_step}, {"metric", metric_}, {"value", *score}};
    dir_.write_json(dir_.best_info(), *best_);
  }
  return {{metric_, *score}, {"best", better}};
}

nlohmann::json BestEpoch::restore() {
  if (!best_) return nullptr;
  trainer_.load_parameters_from(dir_.best());
  return *best_;
}

void BestEpoch::remove(const RunDir& dir) {
  std::error_code ec;
  std::filesystem::remove(dir.best(), ec);
  std::filesystem::remove(dir.best_info(), ec);
}

}  // namespace memgrad::cli
