#!/usr/bin/env python3
"""The figures of bench/regressions/run_h200.sh's reports as one TSV for kport-bench-aa.
  python3 bench/regressions/extract.py DIR > figures.tsv
      the A/A passes: case, machine start, pass, family, median_us, stddev_us, samples
  python3 bench/regressions/extract.py DIR --change > change.tsv
      the change pairs: case, machine start, pair, side (A unchanged, B changed), family,
      median_us, stddev_us, samples"""
import glob, gzip, json, os, re, sys

change = '--change' in sys.argv[2:]
pattern = 'change*-*.json.gz' if change else 'start*-pass*.json.gz'
name = re.compile(r'change(\d+)-([AB])(\d+)\.json\.gz$' if change else r'start(\d+)-pass(\d+)\.json\.gz$')
out = sys.stdout
for path in sorted(glob.glob(os.path.join(sys.argv[1], pattern))):
    m = name.search(path)
    if not m:
        continue
    try:
        report = json.loads(gzip.open(path).read())
    except (OSError, ValueError) as e:
        print(f'{path}: unreadable ({e})', file=sys.stderr)
        continue
    where = f'{m.group(1)}\t{m.group(3)}\t{m.group(2)}' if change else f'{m.group(1)}\t{m.group(2)}'
    for r in report.get('results', []):
        if r.get('verdict') != 'measured':
            continue
        t = r['timing']
        key = f"{r['instance']}|{r['dtype']}|{r['shape_text']}"
        out.write(f"{key}\t{where}\t{r['family']}\t{t['median_ms'] * 1000:.6f}\t"
                  f"{t['stddev_ms'] * 1000:.6f}\t{t['samples']}\n")
