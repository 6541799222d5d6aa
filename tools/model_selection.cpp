// Model selection over epochs (see model_selection.hpp).
#include "tools/model_selection.hpp"

#include <cmath>
#include <filesystem>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"

namespace memgrad::cli {

namespace {
void check_record(const nlohmann::json& j, const std::string& source) {
  MG_CHECK(j.is_object() && j.contains("value") && j["value"].is_number() && j.contains("epoch"),
           source, ": not a best-epoch record (expected epoch, step, metric, value)");
}
}  // namespace

BestEpoch::BestEpoch(const RunDir& dir, Trainer& trainer)
    : dir_(dir), trainer_(trainer), metric_(trainer.selection_metric()) {
  if (!active() || !std::filesystem::exists(dir_.best_info())) return;
  nlohmann::json j = dir_.read_json(dir_.best_info());
  check_record(j, dir_.best_info());
  MG_CHECK(std::filesystem::exists(dir_.best()), dir_.best_info(), " has no ", dir_.best());
  best_ = j;
}

void BestEpoch::resume(const nlohmann::json& record) {
  if (record.is_null()) {
    best_.reset();
    return;
  }
  check_record(record, dir_.checkpoint() + " (metadata 'best_epoch')");
  best_ = record;
}

nlohmann::json BestEpoch::end_epoch(int64_t epoch, int64_t next_step) {
  if (!active()) return nlohmann::json::object();
  // The task's numbers are logged whichever selects (a task without a score has none).
  nlohmann::json line = trainer_.task().selection_metric().empty() ? nlohmann::json::object()
                                                                   : trainer_.epoch_scores();
  const bool by_loss = metric_ == "valid_loss";
  if (by_loss) line["valid_loss"] = trainer_.last_validation_loss();
  const nlohmann::json& value = line.at(metric_);
  const std::optional<double> score = value.is_number() && std::isfinite(value.get<double>())
                                          ? std::optional<double>(value.get<double>())
                                          : std::nullopt;
  if (!score) {
    line["best"] = false;
    return line;
  }
  const double best = best_ ? (*best_)["value"].get<double>() : 0.0;
  const bool better = !best_ || (by_loss ? *score < best : *score > best);
  if (better) {
    trainer_.save_checkpoint(dir_.best(), next_step);  // parameters only: never resumed from
    best_ = nlohmann::json{
        {"epoch", epoch}, {"step", next_step}, {"metric", metric_}, {"value", *score}};
    dir_.write_json(dir_.best_info(), *best_);
  }
  line["best"] = better;
  return line;
}

bool BestEpoch::out_of_patience(int64_t epoch, int64_t patience) const {
  return patience > 0 && best_ && epoch - (*best_)["epoch"].get<int64_t>() >= patience;
}

nlohmann::json BestEpoch::restore() {
  if (!best_) return nullptr;
  // A kill after a later best epoch, then a resume that stopped before redoing it, leaves in
  // best.safetensors the parameters of an epoch this run's record has not reached.
  const std::string step = dump_json((*best_)["step"]);
  const std::string saved = load_safetensors(dir_.best()).metadata["next_step"];
  MG_CHECK(saved == step, dir_.best(), ": holds the parameters of step ", saved,
           ", not those of the best epoch so far (", dump_json((*best_)["epoch"]), ", step ", step,
           "): a later best epoch was saved before the run was killed; resume it past step ", saved,
           " to select again");
  trainer_.load_parameters_from(dir_.best());
  return *best_;
}

void BestEpoch::remove(const RunDir& dir) {
  std::error_code ec;
  std::filesystem::remove(dir.best(), ec);
  std::filesystem::remove(dir.best_info(), ec);
}

}  // namespace memgrad::cli
