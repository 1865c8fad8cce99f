// rmsnorm for long rows (over 32 KB), sm_90 and later: a thread-block cluster per row, each
// CTA staging its slice of the row in shared memory (bulk copies), so the row is read from HBM
// once and written once; the CTAs' sums of squares meet through distributed shared
// memory. Rows that are not whole 16-byte vectors, unaligned buffers, rows of at most 32 KB
// (the vec16 instances' own) and rows over what 16 CTAs hold are refused with the reason.
// See common/rowwise_cluster_sm90.cuh and NOTES.md.
#include "common/rowwise_cluster_sm90.cuh"

namespace {

// Slices of 32 KB (a 64 KB row: 2 CTAs, 256 KB: 8; 6 CTAs a SM by shared memory) and of 64 KB
// (half the CTAs, 3 a SM; rows up to 1 MB). 16 KB slices (128 threads, 13 CTAs a SM) were slower
// on the H200 at every bench row (rmsnorm 0.80-0.86 of the copy against 0.90).
KPORT_ROWWISE_CLUSTER(rmsnorm, false, 256, 32, 524288);
KPORT_ROWWISE_CLUSTER(rmsnorm, false, 512, 64, 1048576);

}  // namespace
