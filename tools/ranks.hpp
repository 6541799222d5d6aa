// The processes of a data-parallel training run (`mpirun -np R memgrad train ...`) as the trainer
// sees them: R ranks, each training its share of every batch; the few collective operations the
// trainer needs, with results that never depend on timing (sums are taken in rank order).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/tensor.hpp"

namespace memgrad::cli {

class Ranks {
 public:
  virtual ~Ranks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `n` doubles, in rank order: out[r * n + i] is rank r's mine[i].
  virtual void all_gather(const double* mine, size_t n, double* out) = 0;
  // In place, on every rank: data = x_0 + x_1 + ... + x_{R-1} element by element, added in rank
  // order (((x_0 + x_1) + x_2) ...), the same bits everywhere. Each rank sums the part of the
  // elements it owns (1/R of them) from all ranks, then the parts are gathered: 2 (R - 1) / R of
  // the buffer sent and received per rank, as a ring allreduce.
  virtual void sum_in_rank_order(void* data, size_t n, DType dtype) = 0;
  // Rank 0's text, on every rank.
  virtual std::string broadcast(const std::string& text) = 0;
  // Whether `flag` is set on any rank (every rank learns the same answer).
  bool any(bool flag);
  // Stops every rank at once after an error on this one (MPI_Abort): the others would wait for it
  // in the next collective forever. Prints `message` first, with the rank.
  [[noreturn]] virtual void abort(const std::string& message, int exit_code) = 0;
  // Bytes this rank sent and received in sum_in_rank_order so far (communication volume).
  size_t bytes_moved() const { return bytes_moved_; }

 protected:
  size_t bytes_moved_ = 0;

 private:
  std::vector<double> flags_;  // any()'s
};

// The MPI world when this process was started by mpirun with more than one process (MPI is
// initialised then, and finalised when the object goes); nullptr for a process on its own. An
// Error when mpirun started several processes but this memgrad was built without MPI: each would
// train alone and write the same run directory.
std::unique_ptr<Ranks> join_ranks();
// Whether this memgrad was built with MPI.
bool built_with_mpi();

}  // namespace memgrad::cli
