#!/usr/bin/env python3
"""The figures of bench/regressions/run_h200.sh's reports as one TSV for kport-bench-aa:
case, machine start, pass, family, median_us, stddev_us, samples.
  python3 bench/regressions/extract.py DIR > figures.tsv"""
import glob, gzip, json, os, re, sys

out = sys.stdout
for path in sorted(glob.glob(os.path.join(sys.argv[1], 'start*-pass*.json.gz'))):
    m = re.search(r'start(\d+)-pass(\d+)\.json\.gz$', path)
    try:
        report = json.loads(gzip.open(path).read())
    except (OSError, ValueError) as e:
        print(f'{path}: unreadable ({e})', file=sys.stderr)
        continue
    for r in report.get('results', []):
        if r.get('verdict') != 'measured':
            continue
        t = r['timing']
        key = f"{r['instance']}|{r['dtype']}|{r['shape_text']}"
        out.write(f"{key}\t{m.group(1)}\t{m.group(2)}\t{r['family']}\t{t['median_ms'] * 1000:.6f}\t"
                  f"{t['stddev_ms'] * 1000:.6f}\t{t['samples']}\n")
