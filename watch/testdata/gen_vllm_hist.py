# Generates watch/testdata/vllm-hist-{1,2}.txt: a vLLM V1 exposition (names, types, labels and
# bucket bounds of vllm/v1/metrics/loggers.py) whose counters and buckets move by known amounts.
import itertools
M='model_name="Qwen/Qwen2.5-0.5B-Instruct"'
TTFT=[0.001,0.005,0.01,0.02,0.04,0.06,0.08,0.1,0.25,0.5,0.75,1.0,2.5,5.0,7.5,10.0,20.0,40.0,80.0,160.0,640.0,2560.0]
ITL=[0.01,0.025,0.05,0.075,0.1,0.15,0.2,0.3,0.4,0.5,0.75,1.0,2.5,5.0,7.5,10.0,20.0,40.0,80.0]
REQ=[0.3,0.5,0.8,1.0,1.5,2.0,2.5,5.0,10.0,15.0,20.0,30.0,40.0,50.0,60.0,120.0,240.0,480.0,960.0,1920.0,7680.0]
def fmt(x):
    s=repr(float(x)); return s
def hist(name,help,bounds,per_bucket,total_sum):
    # per_bucket: dict bound->count landing in that bucket (non-cumulative); +Inf key 'inf'
    out=[f"# HELP {name} {help}",f"# TYPE {name} histogram"]
    cum=0
    for b in bounds:
        cum+=per_bucket.get(b,0)
        out.append(f'{name}_bucket{{engine="0",le="{fmt(b)}",{M}}} {float(cum)}')
    cum+=per_bucket.get('inf',0)
    out.append(f'{name}_bucket{{engine="0",le="+Inf",{M}}} {float(cum)}')
    out.append(f'{name}_count{{engine="0",{M}}} {float(cum)}')
    out.append(f'{name}_sum{{engine="0",{M}}} {total_sum}')
    return out
def gauge(name,help,v): return [f"# HELP {name} {help}",f"# TYPE {name} gauge",f'{name}{{engine="0",{M}}} {v}']
def counter(name,help,v): return [f"# HELP {name} {help}",f"# TYPE {name} counter",f'{name}{{engine="0",{M}}} {float(v)}']
def expo(s):
    L=[]
    L+=gauge("vllm:num_requests_running","Number of requests in model execution batches.",s['run'])
    L+=gauge("vllm:num_requests_waiting","Number of requests waiting to be processed.",s['wait'])
    L+=gauge("vllm:kv_cache_usage_perc","KV-cache usage. 1 means 100 percent usage.",s['kv'])
    L+=counter("vllm:prefix_cache_queries_total","Prefix cache queries, in terms of number of queried tokens.",s['q'])
    L+=counter("vllm:prefix_cache_hits_total","Prefix cache hits, in terms of number of cached tokens.",s['h'])
    L+=counter("vllm:num_preemptions_total","Cumulative number of preemption from the engine.",s['pre'])
    L+=counter("vllm:prompt_tokens_total","Number of prefill tokens processed.",s['prompt'])
    L+=counter("vllm:generation_tokens_total","Number of generation tokens processed.",s['gen'])
    L+=counter("vllm:spec_decode_num_drafts_total","Number of spec decoding drafts.",s['drafts'])
    L+=counter("vllm:spec_decode_num_draft_tokens_total","Number of draft tokens.",s['dt'])
    L+=counter("vllm:spec_decode_num_accepted_tokens_total","Number of accepted tokens.",s['at'])
    L+=hist("vllm:time_to_first_token_seconds","Histogram of time to first token in seconds.",TTFT,s['ttft'],s['ttft_sum'])
    L+=hist("vllm:inter_token_latency_seconds","Histogram of inter-token latency in seconds.",ITL,s['itl'],s['itl_sum'])
    L+=hist("vllm:request_queue_time_seconds","Histogram of time spent in WAITING phase for request.",REQ,s['queue'],s['queue_sum'])
    L+=hist("vllm:e2e_request_latency_seconds","Histogram of e2e request latency in seconds.",REQ,s['e2e'],s['e2e_sum'])
    return "\n".join(L)+"\n"
s1=dict(run=3,wait=1,kv=0.25,q=10000,h=4000,pre=2,prompt=50000,gen=120000,drafts=900,dt=2700,at=1800,
  ttft={0.04:1,0.06:2,0.08:2,0.1:5,0.25:10,0.5:5,0.75:1},ttft_sum=5.5,
  itl={0.01:100,0.025:400,0.05:300,0.075:50},itl_sum=20.0,
  queue={0.3:25,0.5:1},queue_sum=1.2,
  e2e={2.5:6,5.0:10,10.0:10},e2e_sum=150.0)
s2=dict(run=8,wait=5,kv=0.625,q=12000,h=5500,pre=5,prompt=53000,gen=123456,drafts=1100,dt=3300,at=2250,
  # TTFT: 40 more requests: 4 in (0.06,0.08], 16 in (0.08,0.1], 20 in (0.1,0.25]
  ttft={0.04:1,0.06:2,0.08:6,0.1:21,0.25:30,0.5:5,0.75:1},ttft_sum=9.9,
  # ITL: 1000 more: 200 in (0,0.01], 600 in (0.01,0.025], 200 in (0.025,0.05]
  itl={0.01:300,0.025:1000,0.05:500,0.075:50},itl_sum=36.0,
  # queue: 40 more, all in (0,0.3]
  queue={0.3:65,0.5:1},queue_sum=2.0,
  # e2e: 40 more: 10 in (1.5,2.0], 30 in (2.0,2.5]
  e2e={2.0:10,2.5:36,5.0:10,10.0:10},e2e_sum=250.0)
import sys
open(sys.argv[1]+'/vllm-hist-1.txt','w').write(expo(s1))
open(sys.argv[1]+'/vllm-hist-2.txt','w').write(expo(s2))
