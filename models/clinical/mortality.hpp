// Pieces shared by the in-hospital mortality models of the `physionet2012` task (logreg, gru; the
// batch fields are described in tasks/physionet2012.hpp): the sizes the task sets in their
// configs, reading the batch, the loss, and a tiny check batch for gradient checks.
//
// Every such model returns one logit per stay, predictions [B, 1], and the loss
// mean_b bce_with_logits(logit_b, y_b) (plus the model's own penalty, if any).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "engine/rng.hpp"
#include "models/model.hpp"

namespace memgrad::mortality {

// The config keys the task sets (its model_dims) with stand-in defaults (the task's values
// replace them): input_size F, feature_size S, output_size 1, steps T.
nlohmann::json task_dims();

// The batch field `name` ("x" [B, T, F], "features" [B, S]) on the tape, checked against the
// model's sizes (want: the expected shape without B); an Error names the model and the field.
Var input(Tape& tape, const Batch& batch, const std::string& model, const std::string& name,
          const Shape& want);

// predictions = logits [B, 1]; loss = mean bce_with_logits(logits, y) + penalty (undefined: none).
ForwardResult result(Tape& tape, const Batch& batch, const std::string& model, Var logits,
                     Var penalty = Var{});

// A tiny batch of B stays with random x [B, T, F], features [B, S] and labels y [B, 1] holding
// both classes.
void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t B, int64_t T, int64_t F,
                      int64_t S);

// Registers a mortality model: its gradient checks run on make_check_batch's tiny batch (3 stays,
// 4 steps, 5 inputs, 6 features), which each of `check_configs` must be sized for.
void register_model(const std::string& name, const std::string& summary, ModelFactory create,
                    nlohmann::json default_config, nlohmann::json train_defaults,
                    std::vector<nlohmann::json> check_configs);

}  // namespace memgrad::mortality
