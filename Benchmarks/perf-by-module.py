#!/usr/bin/env python3
# Attributes each sample of a `perf record -g` profile to the first Swift module on its stack (from the leaf up), so
# that retain/release and malloc count against the code that called them, and prints µs per request by module and by
# function. Used for the HTTP/2 profile in README.md ("Results: session 17").
#
#   perf record -F 2000 -g -o perf.data CourierBench …      # e.g. through BENCH_BIN in http2.sh with CLIENTS=courier
#   python3 Benchmarks/perf-by-module.py perf.data REQUESTS [TOP] [--hz HZ] [--time START,END]
#
# Samples at 2,000 Hz (the default --hz) are 500 µs each; REQUESTS is how many requests the profiled process sent
# (within the --time window, when one is given). One phase of `CourierBench flood --marks`, which prints each phase's
# window on standard error:
#
#   perf record -k CLOCK_MONOTONIC -F 2000 -g -o perf.data CourierBench flood --url … --marks
#   python3 Benchmarks/perf-by-module.py perf.data 20000 --time START,END
import sys, re, collections, subprocess
args = sys.argv[1:]
options = {}
for flag in ('--hz', '--time'):
    if flag in args:
        at = args.index(flag)
        options[flag] = args[at + 1]
        del args[at:at + 2]
sys.argv[1:] = args
SAMPLE_US = 1e6 / float(options.get('--hz', '2000'))
# attribute each sample to the first frame (from the leaf) that belongs to a Swift module of interest
def mod(sym):
    m = re.match(r'\$s(\d+)', sym)
    if not m: return None
    n = int(m.group(1)); name = sym[2+len(m.group(1)):2+len(m.group(1))+n]
    return name
window = ['--time', options['--time']] if '--time' in options else []
data = subprocess.run(['perf','script','-i',sys.argv[1]] + window,capture_output=True,text=True).stdout
samples = data.strip().split('\n\n')
bymod = collections.Counter(); bysym = collections.Counter(); total=0
for s in samples:
    lines=[l.strip() for l in s.strip().split('\n') if l.strip()]
    frames=[]
    for l in lines[1:]:
        parts=l.split(None,1)
        if len(parts)<2: continue
        sym=re.sub(r'\+0x[0-9a-f]+ \(.*\)$','',parts[1]); sym=re.sub(r' \(.*\)$','',sym)
        frames.append('x '+sym)
    if not frames: continue
    total+=1
    found=None
    for f in frames:
        sym=f.split(None,1)[-1]
        mname=mod(sym)
        if mname and mname not in ('s',):
            found=(mname,sym);break
    if found is None:
        bymod['<none:'+frames[0].split(None,1)[-1][:40]+'>']+=1
    else:
        bymod[found[0]]+=1; bysym[found[1][:110]]+=1
reqs=float(sys.argv[2])
print('total samples',total)
for k,v in bymod.most_common(25): print(f'{v*SAMPLE_US/reqs:8.2f} us/req  {k}')
print()
for k,v in bysym.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 30): print(f'{v*SAMPLE_US/reqs:8.2f} us/req  {k}')
