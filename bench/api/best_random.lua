-- wrk script: GET /api/v1/best at seeded random questions within the ranges of the
-- database kport-bench-seed writes (3 GPU models, 4 families, their dtypes): one in five
-- at a seeded (measured) shape, the rest at random shapes (unmeasured: answered from
-- the nearest measured shape, and counted as unmeasured asks).
--   wrk -s bench/api/best_random.lua URL -- PATH [SEED]
-- PATH is the path the questions are appended to (/api/v1/best, or a static file for
-- the nginx peer, which ignores the query). Each thread pre-formats 20,000 requests
-- (seed + thread number), so wrk spends no Lua time per request on building them.
local gpus = {"NVIDIA%20H200", "NVIDIA%20H100%2080GB%20HBM3", "NVIDIA%20A100-SXM4-80GB"}
local families = {
  {op = "gemm", dtypes = {"bf16", "fp16", "fp32"},
   seeded = {"m=2048,n=2048,k=2048", "m=4096,n=4096,k=4096", "m=8192,n=8192,k=8192", "m=4096,n=4096,k=512",
             "m=128,n=8192,k=8192", "m=1000,n=1000,k=1000"}},
  {op = "attention", dtypes = {"bf16", "fp16"},
   seeded = {"b=4,h=16,l=4096,d=128,causal=0", "b=4,h=16,l=4096,d=128,causal=1", "b=4,h=32,l=4096,d=64,causal=0",
             "b=1,h=8,l=1000,d=64,causal=1"}},
  {op = "rmsnorm", dtypes = {"bf16", "fp16", "fp32"},
   seeded = {"rows=32768,cols=4096", "rows=4096,cols=1000", "rows=1024,cols=4097"}},
  {op = "softmax", dtypes = {"bf16", "fp16", "fp32"},
   seeded = {"rows=32768,cols=4096", "rows=4096,cols=1000", "rows=1024,cols=4097"}},
}

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

-- A value between lo and hi, log-uniform; half of them rounded to a multiple of 128.
local function extent(lo, hi)
  local v = math.floor(math.exp(math.log(lo) + math.random() * (math.log(hi) - math.log(lo))))
  if math.random() < 0.5 then v = math.max(128, v - v % 128) end
  return v
end

local function random_shape(op)
  if op == "gemm" then
    return "m=" .. extent(128, 8192) .. ",n=" .. extent(1000, 8192) .. ",k=" .. extent(512, 8192)
  elseif op == "attention" then
    local d = ({64, 128})[math.random(2)]
    return "b=" .. math.random(1, 8) .. ",h=" .. ({8, 16, 32})[math.random(3)] .. ",l=" .. extent(1000, 4096) ..
           ",d=" .. d .. ",causal=" .. math.random(0, 1)
  end
  return "rows=" .. extent(1024, 32768) .. ",cols=" .. extent(1000, 4097)
end

local requests = {}
local n = 0
function init(args)
  local path = args[1] or "/api/v1/best"
  local seed = tonumber(args[2] or "42")
  math.randomseed(seed * 1000 + (id or 0))
  for i = 1, 20000 do
    local f = families[math.random(#families)]
    local shape = math.random() < 0.2 and f.seeded[math.random(#f.seeded)] or random_shape(f.op)
    local q = "?gpu=" .. gpus[math.random(#gpus)] .. "&op=" .. f.op .. "&dtype=" .. f.dtypes[math.random(#f.dtypes)] ..
              "&shape=" .. shape
    requests[i] = wrk.format("GET", path .. q)
  end
end

function request()
  n = n % #requests + 1
  return requests[n]
end
