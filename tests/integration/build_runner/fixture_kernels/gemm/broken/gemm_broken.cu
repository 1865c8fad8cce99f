// Fixture: does not compile, on purpose (an undeclared identifier).
__global__ void gemm_broken(float* c) { c[threadIdx.x] = undeclared_tile_value; }
