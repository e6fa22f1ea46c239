// MPI: the split of the segments, the job-wide progress, and the exact reduction on rank 0; and what a
// sweep's ranks share (one kernel, job-wide counts, their results' text to rank 0).
#include "mpi_job.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "core/run/kernel_info.hpp"
#include "core/run/runner.hpp"

#if MASKSCOPE_MPI
#include <mpi.h>
#endif

namespace maskscope::cli {

bool mpi_launched() {
#if MASKSCOPE_MPI
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(v) != nullptr) return true;
#endif
  return false;
}

MpiSession::MpiSession() {
#if MASKSCOPE_MPI
  if (!mpi_launched()) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // only the main thread calls MPI
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  active_ = true;
#endif
}

MpiSession::~MpiSession() {
#if MASKSCOPE_MPI
  if (active_) MPI_Finalize();
#endif
}

void MpiSession::abort(int code) const {
#if MASKSCOPE_MPI
  if (active_) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

void mpi_require_one_kernel(const MpiSession& mpi, std::string kernel) {
#if MASKSCOPE_MPI
  const int r = mpi.rank();
  // Every rank must run the same kernel (kernel_info.hpp kernel_name): processors with and without
  // AVX2 (or AVX-512) round differently, and the exact reduction promises one process's bits.
  if (const char* odd = std::getenv("MASKSCOPE_TEST_KERNEL_RANK"); odd && std::atoi(odd) == r)
    kernel += " (test)";                       // tests: a rank on a processor of another kind
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : kernel) hash = (hash ^ c) * 0x100000001b3ULL;
  std::uint64_t lowest = 0, highest = 0;
  MPI_Allreduce(&hash, &lowest, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&hash, &highest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (lowest != highest) {
    if (r == 0)
      std::cerr
          << "maskscope-cli: the MPI ranks run different kernels (rank 0: '" << kernel
          << "'; processors with and without AVX2 or AVX-512 round differently). Run the job on processors of one "
             "kind, or compute shards (--shard) on each kind and keep their results apart.\n";
    MPI_Barrier(MPI_COMM_WORLD);  // rank 0's message first
    mpi.abort(2);
  }
#else
  (void)mpi;
  (void)kernel;
#endif
}

std::vector<std::int64_t> mpi_sum(const MpiSession& mpi, std::vector<std::int64_t> local) {
#if MASKSCOPE_MPI
  if (mpi.active()) {
    std::vector<std::int64_t> total(local.size());
    MPI_Allreduce(local.data(), total.data(), int(local.size()), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return total;
  }
#else
  (void)mpi;
#endif
  return local;
}

namespace {
template <class T>
void broadcast_values(const MpiSession& mpi, T* data, std::size_t count, int root) {
#if MASKSCOPE_MPI
  if (!mpi.active()) return;
  constexpr std::size_t kChunk = std::size_t(1) << 28;  // values per message, under MPI's int count
  const MPI_Datatype type = sizeof(T) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE;
  for (std::size_t at = 0; at < count; at += kChunk)
    MPI_Bcast(data + at, int(std::min(kChunk, count - at)), type, root, MPI_COMM_WORLD);
#else
  (void)mpi, (void)data, (void)count, (void)root;
#endif
}
}  // namespace

void mpi_broadcast(const MpiSession& mpi, float* data, std::size_t count, int root) {
  broadcast_values(mpi, data, count, root);
}
void mpi_broadcast(const MpiSession& mpi, double* data, std::size_t count, int root) {
  broadcast_values(mpi, data, count, root);
}

std::vector<std::string> mpi_gather_text(const MpiSession& mpi, const std::string& mine) {
  std::vector<std::string> all;
#if MASKSCOPE_MPI
  if (mpi.active()) {
    constexpr std::size_t kChunk = std::size_t(1) << 30;  // bytes per message, under MPI's int count
    if (mpi.rank() == 0) {
      all.push_back(mine);
      for (int src = 1; src < mpi.size(); ++src) {
        std::int64_t size = 0;
        MPI_Recv(&size, 1, MPI_INT64_T, src, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::string text(std::size_t(size), '\0');
        for (std::size_t at = 0; at < text.size(); at += kChunk)
          MPI_Recv(text.data() + at, int(std::min(kChunk, text.size() - at)), MPI_CHAR, src, 4, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        all.push_back(std::move(text));
      }
    } else {
      std::int64_t size = std::int64_t(mine.size());
      MPI_Send(&size, 1, MPI_INT64_T, 0, 3, MPI_COMM_WORLD);
      for (std::size_t at = 0; at < mine.size(); at += kChunk)
        MPI_Send(mine.data() + at, int(std::min(kChunk, mine.size() - at)), MPI_CHAR, 0, 4, MPI_COMM_WORLD);
    }
    return all;
  }
#else
  (void)mpi;
#endif
  all.push_back(mine);
  return all;
}

void mpi_run(const MpiSession& mpi, const Settings& s, SegmentRange range, ExactSums& out, double& seconds,
             const std::function<void(const MpiProgress&)>& progress) {
#if MASKSCOPE_MPI
  const int P = mpi.size(), r = mpi.rank();
  mpi_require_one_kernel(mpi, kernel_name(s));
  // Rank r: the r-th of P near-equal parts of `range` (possibly empty when P exceeds the segments).
  const std::int64_t G = range.end - range.begin;
  RunOptions o;
  o.segments = {range.begin + G * r / P, range.begin + G * (r + 1) / P};
  o.publish_interval = std::chrono::milliseconds(200);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Run> run;
  try {
    run = std::make_unique<Run>(s, o);
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: rank " << r << " of " << P << ": " << e.what() << "\n";
    mpi.abort(1);
  }
  if (const char* kill = std::getenv("MASKSCOPE_TEST_KILL_RANK"); kill && std::atoi(kill) == r)
    std::raise(SIGKILL);  // tests: a rank that dies mid-run must not yield a result
  for (;;) {              // job-wide progress: every rank takes part until all are done
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::int64_t local[2] = {run->samples_done(), run->done() ? 1 : 0}, total[2] = {0, 0};
    MPI_Allreduce(local, total, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0 && progress) progress({total[0], t});
    if (total[1] == P) break;
  }
  run->wait();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ExactSums& mine = run->exact();
  // Rank 0 adds the others' sums as they arrive; integer addition, so the order does not matter.
  constexpr std::size_t kChunk = std::size_t(1) << 27;  // words per message (1 GiB), under MPI's int count
  if (r == 0) {
    out = mine;
    ExactSums other(mine.size());
    for (int src = 1; src < P; ++src) {
      std::int64_t count = 0;
      MPI_Recv(&count, 1, MPI_INT64_T, src, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (std::size_t at = 0; at < other.word_count(); at += kChunk)
        MPI_Recv(other.words() + at, int(std::min(kChunk, other.word_count() - at)), MPI_UINT64_T, src, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (std::size_t at = 0; at < other.size(); at += kChunk)
        MPI_Recv(other.invalid().data() + at, int(std::min(kChunk, other.size() - at)), MPI_UINT8_T, src, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      other.set_count(count);
      out.add(other);
    }
  } else {
    std::int64_t count = mine.count();
    MPI_Send(&count, 1, MPI_INT64_T, 0, 0, MPI_COMM_WORLD);
    for (std::size_t at = 0; at < mine.word_count(); at += kChunk)
      MPI_Send(mine.words() + at, int(std::min(kChunk, mine.word_count() - at)), MPI_UINT64_T, 0, 1, MPI_COMM_WORLD);
    for (std::size_t at = 0; at < mine.size(); at += kChunk)
      MPI_Send(mine.invalid().data() + at, int(std::min(kChunk, mine.size() - at)), MPI_UINT8_T, 0, 2, MPI_COMM_WORLD);
  }
#else
  (void)mpi;
  (void)s;
  (void)range;
  (void)out;
  (void)seconds;
  (void)progress;
#endif
}

}  // namespace maskscope::cli
