// Fixture: needs wgmma, so it applies to sm_90a only; never compiled for sm_80.
__global__ void attention_hopper(float* o) { o[threadIdx.x] = 0.f; }
