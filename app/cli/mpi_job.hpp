// One run across the ranks of an MPI job (`mpirun -np P maskscope-cli run ...`): rank r computes
// its share of the run's segments with its own threads, and rank 0 adds every rank's exact sums
// (exact_sums.hpp), so the result is the single-process run's, bit for bit, for any P. A sweep
// (`mpirun ... sweep ...`, cmd_sweep.cpp) splits by points and sends each rank's points to rank 0.
// Built when MASKSCOPE_MPI is on and MPI is found; without it, mpi_launched() is always false.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/stats/exact_sums.hpp"
#include "core/stats/sample_grid.hpp"
#include "core/model/settings.hpp"

namespace maskscope::cli {

// True when this process was started by mpirun / srun (and maskscope was built with MPI).
bool mpi_launched();

// MPI_Init on construction when mpi_launched(), MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ends the whole job at once with this exit code (after a message on this rank's stderr).
  [[noreturn]] void abort(int code) const;

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
};

struct MpiProgress {
  std::int64_t samples_done = 0;  // over all ranks
  double seconds = 0;             // since the job's runs started
};

// Every rank calls it with the kernel it runs (kernel_info.hpp kernel_name); when they differ, rank 0
// names it and the job ends with exit code 2 (processors of different kinds round differently).
void mpi_require_one_kernel(const MpiSession& mpi, std::string kernel);
// The sums over all ranks of each of `local` (every rank calls it; without MPI, `local`).
std::vector<std::int64_t> mpi_sum(const MpiSession& mpi, std::vector<std::int64_t> local);
// Every rank's `mine`, on rank 0 in rank order (every rank calls it; other ranks get nothing back).
std::vector<std::string> mpi_gather_text(const MpiSession& mpi, const std::string& mine);

// `count` floats (or doubles) at `data` from rank `root` to every rank (every rank calls it; without MPI, nothing).
// The training engine's chunk gradients (cmd_train.cpp): each chunk's owner sends it to all.
void mpi_broadcast(const MpiSession& mpi, float* data, std::size_t count, int root);
void mpi_broadcast(const MpiSession& mpi, double* data, std::size_t count, int root);

// Runs segments `range` of settings `s`, split over the ranks; every rank returns, and rank 0's
// `out` holds the sum over all ranks. `progress` is called on rank 0 about every 0.5 s.
// A rank that throws ends the job (MpiSession::abort) with a message naming the rank.
void mpi_run(const MpiSession& mpi, const Settings& s, SegmentRange range, ExactSums& out, double& seconds,
             const std::function<void(const MpiProgress&)>& progress);

}  // namespace maskscope::cli
