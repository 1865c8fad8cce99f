#!/usr/bin/env python3
"""Proves that a change to kernels/ leaves the generated code alone, without a GPU.

    codegen_diff.py snapshot BUILD_DIR OUT [--jobs 2]
        compiles every CUDA unit of a configured kernels build (compile_commands.json)
        exactly as the build does, plus --keep and -Xptxas=-v, into OUT/<object>/:
        the PTX and cubin (keep/) and the ptxas report (ptxas.txt).
    codegen_diff.py compare BEFORE AFTER [--kernels-by-order]
        per unit (variant x target): PTX without line info, PTX with whitespace
        normalised, ptxas resources per kernel (registers, barriers, stack, spills,
        shared memory), and the cubin's sections other than debug info and symbol
        tables (machine code .text.*, .nv.info*, .nv.shared*, .nv.constant*). Exit 1
        when resources or sections differ. --kernels-by-order names each unit's
        kernels KERNEL0, KERNEL1, ... in the order of their PTX entries, for a change
        that renames a kernel's template arguments (a configuration moved to a shared
        header) but must not change its code.

Snapshot before and after the change from the same source path: names in an unnamed
namespace carry a per-compilation tag either way, which compare replaces by ANON.
"""
import argparse
import json
import os
import re
import shlex
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# The tag ends in 8 hex digits, followed in a mangled name by the next name's length (no
# separator) or elsewhere by _<n>.
ANON = re.compile(r'\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}(?:_\d+)?')
SKIP = re.compile(r'^(\.nv\.merc)?(\.debug|\.nv_debug|\.rela?\.debug|\.rela?\.nv_debug|'
                  r'\.symtab|\.strtab|\.shstrtab|$)')


def norm(text):
    return ANON.sub('ANON', text)


def snapshot(build, out, jobs):
    units = [c for c in json.load(open(os.path.join(build, 'compile_commands.json')))
             if c['file'].endswith('.cu')]
    os.makedirs(out, exist_ok=True)

    def one(c):
        args = shlex.split(c['command'])
        if 'ccache' in os.path.basename(args[0]):
            args = args[1:]
        i = args.index('-o')
        name = args[i + 1].replace('CMakeFiles/', '').replace('.dir/', '__').replace('/', '__')
        d = os.path.join(out, name)
        os.makedirs(os.path.join(d, 'keep'), exist_ok=True)
        args[i + 1] = os.path.join(d, 'obj.o')
        args += ['--keep', '--keep-dir', os.path.join(d, 'keep'), '-Xptxas=-v']
        r = subprocess.run(args, cwd=c['directory'], capture_output=True, text=True)
        with open(os.path.join(d, 'ptxas.txt'), 'w') as f:
            f.write(r.stderr)
        return f"{name}: {'ok' if r.returncode == 0 else 'FAILED'}"

    with ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(one, units))
    print('\n'.join(results))
    return 0 if all(r.endswith('ok') for r in results) else 1


def ptx_forms(text):
    """(without .loc/.file/comments/debug sections, the same with whitespace normalised)"""
    out, in_debug = [], False
    for line in norm(text).splitlines():
        s = line.strip()
        if s.startswith('.section') and '.debug' in s:
            in_debug = True
        if in_debug:
            in_debug = s != '}'
            continue
        if not s.startswith(('.loc', '.file', '//')):
            out.append(line)
    ws = [re.sub(r'\s+', ' ', re.sub(r'\s*,\s*', ', ', l)).strip() for l in out if l.strip()]
    return '\n'.join(out), '\n'.join(ws)


def ptxas(text):
    res, fn = {}, None
    for line in norm(text).splitlines():
        m = re.search(r"(?:Compiling entry function '|Function properties for )([^' ]+)", line)
        if m:
            fn = m.group(1)
            res.setdefault(fn, [])
        elif fn and line.strip() and 'Compile time' not in line:
            res[fn].append(re.sub(r'\s+', ' ', line.replace('ptxas info :', '').strip()))
    return res


def elf_sections(path):
    b = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    entsize, count, strndx = struct.unpack_from('<HHH', b, 0x3A)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * entsize) for i in range(count)]
    names = hdrs[strndx][4]
    out = {}
    for h in hdrs:
        name = norm(b[names + h[0]: b.index(b'\0', names + h[0])].decode())
        out[name] = (h[1], h[5], b'' if h[1] == 8 else b[h[4]: h[4] + h[5]])  # 8: NOBITS
    return out


def only(folder, ext):
    files = [f for f in os.listdir(folder) if f.endswith(ext)]
    if len(files) != 1:
        sys.exit(f'{folder}: expected one {ext} file, found {files}')
    return os.path.join(folder, files[0])


def by_order(ptx_text):
    """A function mapping each PTX entry's (mangled) name to KERNEL<i>, in entry order."""
    names = re.findall(r'\.entry\s+([\w$.]+)', ptx_text)
    pairs = sorted(((n, f'KERNEL{i}') for i, n in enumerate(names)), key=lambda p: -len(p[0]))
    def rename(text):
        for n, k in pairs:
            text = text.replace(n, k)
        return text
    return rename


def compare(before, after, kernels_by_order=False):
    units = sorted(set(os.listdir(before)) | set(os.listdir(after)))
    same = {'ptx': 0, 'ptx_ws': 0, 'resources': 0, 'cubin': 0}
    kernels, bad = 0, False
    for u in units:
        a, b = os.path.join(before, u), os.path.join(after, u)
        if not (os.path.isdir(a) and os.path.isdir(b)):
            print(f'{u}: only in one snapshot')
            bad = True
            continue
        ta = norm(open(only(os.path.join(a, 'keep'), '.ptx')).read())
        tb = norm(open(only(os.path.join(b, 'keep'), '.ptx')).read())
        na, nb = (by_order(ta), by_order(tb)) if kernels_by_order else (str, str)
        pa, pb = ptx_forms(na(ta)), ptx_forms(nb(tb))
        ra = ptxas(na(norm(open(os.path.join(a, 'ptxas.txt')).read())))
        rb = ptxas(nb(norm(open(os.path.join(b, 'ptxas.txt')).read())))
        sa = {na(k): v for k, v in elf_sections(only(os.path.join(a, 'keep'), '.cubin')).items()}
        sb = {nb(k): v for k, v in elf_sections(only(os.path.join(b, 'keep'), '.cubin')).items()}
        keys = sorted(k for k in set(sa) | set(sb) if not SKIP.match(k))
        sections = [k for k in keys if sa.get(k) != sb.get(k)]
        kernels += len(ra)
        flags = {'ptx': pa[0] == pb[0], 'ptx_ws': pa[1] == pb[1], 'resources': ra == rb,
                 'cubin': not sections}
        for k, v in flags.items():
            same[k] += v
        bad |= not flags['resources'] or bool(sections)
        print(f"{u}: {len(ra)} kernels; PTX {'same' if flags['ptx'] else 'differs'}, "
              f"{'same' if flags['ptx_ws'] else 'differs'} with whitespace normalised; "
              f"resources {'same' if flags['resources'] else 'DIFFER'}; "
              f"{len(keys)} cubin sections {'same' if not sections else 'DIFFER: ' + ', '.join(sections)}")
        for k in sorted(set(ra) | set(rb)):
            if ra.get(k) != rb.get(k):
                print(f'  {k}: {ra.get(k)} -> {rb.get(k)}')
    print(f'{len(units)} units, {kernels} kernels; same: {same}')
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest='command', required=True)
    s = sub.add_parser('snapshot')
    s.add_argument('build')
    s.add_argument('out')
    s.add_argument('--jobs', type=int, default=2)
    c = sub.add_parser('compare')
    c.add_argument('before')
    c.add_argument('after')
    c.add_argument('--kernels-by-order', action='store_true')
    args = p.parse_args()
    if args.command == 'snapshot':
        return snapshot(args.build, args.out, args.jobs)
    return compare(args.before, args.after, args.kernels_by_order)


if __name__ == '__main__':
    sys.exit(main())
