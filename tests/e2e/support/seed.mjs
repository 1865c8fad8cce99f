// Seeds a coordinator through its public API, the way operators and runners fill it:
// targets, kernels, two commits, runners, and pipelines whose jobs are claimed, built
// and checked. The facts below are what the browser tests look for.
export const facts = {
  targets: ['sm_90a', 'sm_100a'],
  gpu: 'NVIDIA H200',
  gpuRunner: 'h200-<b>0</b>',
  parent: 'a1'.repeat(20),
  child: 'b2'.repeat(20),
  childMessage: 'Retile wgmma <script>window.__kportXss = 1</script> & friends',
  shape: 'm=4096,n=4096,k=4096',
};

const INSTANCES = [
  ['gemm.simt.a', 'gemm', 'simt'],
  ['gemm.mma_sync.a', 'gemm', 'mma_sync'],
  ['gemm.wgmma_tma.a', 'gemm', 'wgmma_tma'],
  ['rmsnorm.vec16.a', 'rmsnorm', 'vec16'],
];

// Per commit: build outcome per target and variant, and check outcome per instance.
const BUILDS = {
  sm_90a: { simt: ['ok', 64, 0], mma_sync: ['ok', 128, 0], wgmma_tma: ['ok', 168, 96], vec16: ['ok', 40, 0] },
  sm_100a: { simt: ['compile_error', null, null], mma_sync: ['ok', 128, 0], wgmma_tma: ['not_applicable', null, null], vec16: ['ok', 40, 0] },
};
const CHECKS = {
  [facts.parent]: { 'gemm.simt.a': ['passed', 900], 'gemm.mma_sync.a': ['passed', 300], 'gemm.wgmma_tma.a': ['failed', null], 'rmsnorm.vec16.a': ['passed', 40] },
  [facts.child]: { 'gemm.simt.a': ['failed', null], 'gemm.mma_sync.a': ['passed', 420], 'gemm.wgmma_tma.a': ['passed', 150], 'rmsnorm.vec16.a': ['passed', 40.2] },
};

export function resultFor(instance, [status, median], extra = {}) {
  const [, family, variant] = INSTANCES.find(([n]) => n === instance);
  const shape = family === 'gemm' ? facts.shape : 'rows=32768,cols=4096';
  const flops = family === 'gemm' ? 2 * 4096 ** 3 : null;
  const bytes = family === 'gemm' ? null : 2 * 2 * 32768 * 4096;
  return {
    target: 'sm_90a', family, variant, instance, dtype: 'bf16', shape, toolkit: '13.0',
    gpu_model: facts.gpu, gpu_uuid: 'GPU-0', arch: '9.0', driver: '580.159.04', status,
    message: status === 'passed' ? '' : 'max_rel_err 0.31 > tolerance 0.02 at (17, 4093)',
    max_abs_err: status === 'passed' ? 0.002 : 0.5, normwise_rel_err: status === 'passed' ? 1e-3 : 0.31, tolerance: 0.02,
    nan_inf_count: 0, seed: 7,
    ...(median ? { median_us: median, stddev_us: median * 0.01, samples: 50, baseline: family === 'gemm' ? 'cublas' : 'device_copy',
      baseline_median_us: family === 'gemm' ? 180 : 30,
      ratio: (family === 'gemm' ? 180 : 30) / median,
      ...(flops ? { tflops: flops / (median * 1e6) } : { gbps: bytes / (median * 1e3) }) } : {}),
    ...extra,
  };
}

async function claim(c, token) {
  const r = await c.call('POST', '/api/v1/runners/claim?wait=0', { token, body: {} });
  if (!r.job) throw new Error('expected a job to claim');
  return r.job;
}

// Runs one pipeline for `sha`: every build job, then the sm_90a check job. A push is
// validated once per commit, so running a commit again takes a manual pipeline.
export async function runPipeline(k, runners, sha, checks, reason = 'push') {
  const c = k.client;
  await c.call('POST', '/api/v1/pipelines', { token: k.admin, body: { commit: sha, repo: 'kernels', reason, targets: facts.targets } });
  for (let i = 0; i < facts.targets.length; i++) {
    const job = await claim(c, runners.build);
    const records = Object.entries(BUILDS[job.target]).map(([variant, [status, registers, spill]]) => ({
      commit: sha, target: job.target, family: variant === "vec16" ? "rmsnorm" : "gemm", variant, status,
      message: status === 'compile_error' ? 'error: identifier "__cvta_generic_to_shared" is undefined <in simt.cu>' : '',
      registers, spill_stores_bytes: spill, spill_loads_bytes: spill, shared_mem_bytes: registers ? 49152 : null,
    }));
    await c.call('POST', `/api/v1/jobs/${job.id}/builds`, { token: runners.build, body: { attempt: job.attempt, records } });
    await c.call('POST', `/api/v1/jobs/${job.id}/log`, { token: runners.build, body: { attempt: job.attempt, text: `nvcc -arch=${job.target} ... <done>\n` } });
    await c.call('POST', `/api/v1/jobs/${job.id}/complete`, { token: runners.build, body: { attempt: job.attempt, status: 'succeeded' } });
  }
  if (!checks) return null;
  const job = await claim(c, runners.gpu);
  const results = Object.entries(checks).map(([instance, outcome]) => ({ ...resultFor(instance, outcome), commit: sha }));
  await c.call('POST', `/api/v1/jobs/${job.id}/results`, { token: runners.gpu, body: { attempt: job.attempt, results } });
  await c.call('POST', `/api/v1/jobs/${job.id}/complete`, { token: runners.gpu, body: { attempt: job.attempt, status: 'succeeded' } });
  return job;
}

export async function seed(k) {
  const c = k.client;
  const admin = { token: k.admin };
  await c.call('PUT', '/api/v1/targets/sm_90a', { ...admin, body: { arch: '9.0', toolkit: '13.0', features: { wgmma: true, tma: true } }, expect: [200, 201] });
  await c.call('PUT', '/api/v1/targets/sm_100a', { ...admin, body: { arch: '10.0', toolkit: '13.0', features: { tcgen05: true } }, expect: [200, 201] });
  await c.call('PUT', '/api/v1/kernels', { ...admin, body: { instances: INSTANCES.map(([name, family, variant]) => ({ name, family, variant })) } });
  await c.call('POST', '/api/v1/repositories', { ...admin, body: { name: 'kernels', url: '/srv/git/kernels.git' } });
  await c.call('POST', '/api/v1/commits', { ...admin, body: { sha: facts.parent, repo: 'kernels', message: 'Add gemm variants', author: 'dev', time_ms: 1764400000000 } });
  await c.call('POST', '/api/v1/commits', { ...admin, body: { sha: facts.child, repo: 'kernels', parent: facts.parent, message: facts.childMessage, author: 'dev <dev@example.com>', time_ms: 1764403600000 } });
  const build = await c.call('POST', '/api/v1/runners/register', { token: k.registration, body: { name: 'build-0', role: 'build', capabilities: { toolkit: '13.0', targets: facts.targets, cores: 32 } } });
  const gpu = await c.call('POST', '/api/v1/runners/register', { token: k.registration, body: { name: facts.gpuRunner, role: 'gpu', capabilities: { gpu_model: facts.gpu, arch: '9.0', driver: '580.159.04', gpu_uuid: 'GPU-0' } } });
  const runners = { build: build.token, gpu: gpu.token };
  await runPipeline(k, runners, facts.parent, CHECKS[facts.parent]);
  await runPipeline(k, runners, facts.child, CHECKS[facts.child]);
  return runners;
}
