// Bench rounds of one case (each a separate harness process) combined into one figure,
// with a spread that includes the rounds' disagreement and a verdict on whether they agree
// well enough for the figure to count as precise. Pure; thread-safe.
#pragma once

#include <boost/json.hpp>

#include <vector>

namespace kport::runner {

// Combines the bench entries of one case from several rounds into one figure.
//
// Agreement: the rounds' noise is the median of their relative standard deviations
// (stddev_ms / median_ms); two round medians agree when they are apart by at most the
// larger of `floor` and that noise, relative to the faster. The largest set of rounds that
// agree with one another is found; when it holds a strict majority of the rounds the
// figure is stable and is made of those rounds (any other round is kept in timing.rounds
// with "outlier": true). Otherwise the figure is made of every round and is marked
// "unstable": true with "unstable_reason" saying why.
//
// The figure: the median of the kept rounds' medians (the mean of the middle two for an
// even count), the rates and the baseline ratio rescaled to it; its stddev_ms is the
// spread of one sample across rounds, sqrt(mean of the kept rounds' variances + sample
// variance of their medians), so rounds that disagree widen it; samples are those of the
// kept rounds; throttle drops are summed and the clock range (lowest, highest) taken over
// all rounds. Each round's median, stddev and samples are under timing.rounds, the rule's
// inputs and outcome under timing.stability, the relative gap between the slowest and
// fastest round under timing.round_spread. One entry comes back unchanged.
boost::json::object combine_bench_rounds(const std::vector<boost::json::object>& rounds, double floor = 0.01);

}  // namespace kport::runner
