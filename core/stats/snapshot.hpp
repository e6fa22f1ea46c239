// An immutable picture of a run at one moment: samples done and every averaged quantity with
// its standard error (docs/model.md sections 3-4). The runner publishes these; readers never wait.
#pragma once

#include <array>
#include <atomic>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/stats/estimate.hpp"
#include "core/stats/leakage.hpp"
#include "core/stats/map.hpp"
#include "core/model/settings.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/stages.hpp"

namespace maskscope {

// One head of a random-weight layer (docs/model.md section 7).
struct HeadStats {
  Map score_mean, score_se;  // NaN where masked
  Map weight_mean, weight_se;
  Estimate rp;      // this head's recency probability (metric_table.hpp)
  Leakage leakage;  // of this head's logits (docs/model.md section 8)
};

// Zuo et al.'s Fig. 2 and Fig. 13 for one layer (Settings::histograms bins; docs/model.md section 9): the
// distributions of sim(a, b) - sim(a, c) and sim(c, b) - sim(c, a) over triples a < b < c (bins over
// [-1, 1], each anchor row weighted equally), with their mass above 0 (ties 1/2) and its SE over samples,
// and the distributions over samples of each sample's adjacency score and RP (bins over [0, 1]). Each
// histogram's bins are shares summing to 1 (empty: not computed; the embeddings have no RP).
struct LayerHistograms {
  std::vector<double> forward_difference, backward_difference, adjacency, rp;
  Estimate forward_above, backward_above;
};

// One stage's Gram matrices over samples (Settings::stage_grams; docs/model.md section 12): the mean inner
// products E[<s_i, s_j>] and the mean cosines E[cos(s_i, s_j)], symmetric n x n, with their standard errors.
struct StageGram {
  Map gram_mean, gram_se;
  Map cosine_mean, cosine_se;
};

struct LayerStats {
  int layer = 0;  // 1-based; 0 for the embeddings of the random-weight family
  // n x n maps (map.hpp): NaN where masked (scores, weights); the cosines are symmetric. The
  // embeddings' score and weight maps are empty.
  Map score_mean, score_se;
  Map weight_mean, weight_se;
  Map cosine_mean, cosine_se;
  std::vector<double> norm_mean, norm_se;  // n
  // The layer's scalar estimates, each a row of the metric table (metric_table.hpp, which says what each
  // is); NaN where the metric does not exist.
  Estimate rp;              // recency probability, ties 1/2; NaN when no triple i > k > j exists
  Estimate adjacency;       // ties 1/2, diagonal left out; NaN when n < 3
  Estimate norm_adjacency;  // adjacency of the norms (docs/model.md section 7); NaN when n < 3
  // The weight on key 0, the attention sink (docs/model.md section 12): per sample the mean of A_i0 over
  // the query rows i >= 1 whose keys include 0 (of the head-mean map), averaged over samples, with its SE
  // over samples. NaN when no such row exists (n 1, a window of 1) and for the embeddings.
  Estimate sink_weight;
  LayerHistograms histograms;  // with Settings::histograms > 0
  // With Settings::stage_grams, indexed by Stage (stages.hpp): the stages the family has (stage_bits);
  // the others' maps are empty (Map::empty()), as are the embeddings'.
  std::array<StageGram, kStageCount> stages;
  std::vector<HeadStats> heads;  // random_weights: one per head (the maps above are their mean)
  Leakage leakage;               // absolute-position leakage dR^2 of the logits S (docs/model.md section 8)
  Leakage weight_leakage;        // ... of the attention weights A (Ruscio Eq. 3: the softmax denominator)
  Map score_diag_normalized;     // score_mean less its diagonals' means (a view of it); NaN where masked
  double score_diag_q01 = 0, score_diag_q99 = 0;
};

struct Snapshot {
  Settings settings;
  std::int64_t samples_done = 0;
  double elapsed_s = 0;
  double samples_per_s = 0;
  bool finished = false;   // reached settings.samples
  bool cancelled = false;  // stopped early; the numbers cover samples_done samples
  std::vector<LayerStats> layers;
  // random_weights: layer 0, the embeddings (cosines, norms, adjacency; no scores). Empty otherwise.
  std::vector<LayerStats> embeddings;

  std::int64_t samples_target() const { return settings.samples; }
};

// Means, standard errors and metrics from the merged moments. The snapshot keeps m's arrays: its
// maps read the means in place and the standard errors where the M2 were (turned into standard
// errors here), so a picture costs one copy of the run's sums and no n x n arrays (at n 512, L 4:
// 25 MB for a snapshot with its moments, instead of 56 for full maps beside a 25 MB copy).
// `stop`, checked before each layer: once it is true the rest is not built and the snapshot is
// incomplete, for a caller that throws it away (an abandoned run: at n 512 a build is milliseconds
// of CPU the next run's first sample needs).
Snapshot make_snapshot(const Settings& s, RunMoments&& m, const KeyRanges& keys,
                       const std::atomic<bool>* stop = nullptr);
// The same from moments the caller keeps (a copy of them is made).
Snapshot make_snapshot(const Settings& s, const RunMoments& m, const KeyRanges& keys,
                       const std::atomic<bool>* stop = nullptr);

// Arrays for a run's moments of `size` values (their contents unspecified) for make_snapshot: the
// memory of a released snapshot where there is some. At n 512 fresh memory costs the publisher
// thousands of page faults, and freeing it would fall to whichever thread let go last (a window's
// UI thread). The pool holds at most one snapshot's arrays, which the one being built takes, so a
// run holds two snapshots' arrays: the published one's and those being built.
RunMoments pooled_moments(std::size_t size);

// `snap`, shared (its arrays go back to the pool when its last map is let go).
std::shared_ptr<const Snapshot> share_snapshot(Snapshot&& snap);
// The bytes of array memory kept for the next snapshot (what the pool holds).
std::size_t pooled_map_bytes();
// Frees the pool's arrays (for a caller that expects no more snapshots, and for tests).
void release_pooled_maps();

// Layer `layer` of a snapshot: 1..L the blocks, 0 the embeddings (random_weights only); nullptr
// when the snapshot has no such layer.
const LayerStats* layer_stats(const Snapshot& snap, int layer);
// `l` as seen through head `head` (0-based): its score and weight maps, diagonal-normalized
// scores and RP are that head's. head < 0, or a layer without heads: `l` unchanged.
LayerStats head_view(const LayerStats& l, int head);

// Tie fraction above which a panel is flagged on screen: RP and adjacency then count many
// comparisons as 1/2 because the representations have collapsed (docs/model.md section 4).
constexpr double kTieFlagFraction = 0.01;

}  // namespace maskscope
