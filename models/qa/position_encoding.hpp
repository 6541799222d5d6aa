// The position encoding of End-To-End Memory Networks (Sukhbaatar et al. 2015, section 4.1), as
// the official Matlab code (facebookarchive/MemNN, MemN2N-babi-matlab) computes it, shared by the
// bAbI models that encode a sentence as a weighted sum of its word embeddings (MemN2N, EntNet,
// DMN+'s input fusion layer):
//     sentence embedding = sum_j l_j * e(x_j)     (elementwise product, j = 1..J')
//     l[j, k] = 1 + 4 (k - (d+1)/2) (j - (J'+1)/2) / (d J'),   k = 1..d, j = 1..J'
//            = 1 + alpha_k beta_j,  alpha_k = 4 (k - (d+1)/2) / (d J'),  beta_j = j - (J'+1)/2
// with d the embedding width and J' the number of positions the formula is built for (MemN2N: the
// J words and the time word, J' = J + 1; its question reads rows 1..J of the same matrix). The
// paper prints l_kj = (1 - j/J) - (k/d)(1 - 2j/J); the official code's form above is the one used.
#pragma once
#include <cstdint>

#include "engine/tensor.hpp"

namespace memgrad::qa {

// l as a [positions, dim] tensor: row j - 1 is word position j, for j = 1..positions of a
// formula built for `total` positions (J'); 1 <= positions <= total, dim >= 1.
Tensor position_encoding(int64_t positions, int64_t total, int64_t dim, DType dtype);

// The factors of l[j, k] = 1 + alpha_k beta_j (1-based j and k), for models that apply the
// encoding without building l (MemN2N folds beta into bag-of-words counts).
inline double position_alpha(int64_t k, int64_t dim, int64_t total) {
  return 4.0 * (double(k) - double(dim + 1) / 2) / (double(dim) * double(total));
}
inline double position_beta(int64_t j, int64_t total) { return double(j) - double(total + 1) / 2; }

}  // namespace memgrad::qa
