#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run modules of rdma-core's own Python test suite on one RDMA device.

usage: rdma_core_suite.py --dev DEV --gid N --out FILE [--no-traffic]
                          [--timeout S] [--src DIR] MODULE...

The suite ships with python3-pyverbs in /usr/share/doc/rdma-core/tests, some
of it gzipped. It is copied into a temporary directory (the *.gz files
gunzipped) and made importable as the package `tests`, without running the
package's __init__.py (which imports every test module, mlx5 and EFA ones
included); only the named modules (e.g. test_pd test_qp) are imported and
run, with `--dev DEV --gid N` given to the suite's own argument parser.

One line per test is written to FILE as each test ends:
`TEST_ID<TAB>STATUS<TAB>REASON`, STATUS being pass, fail, error or skip and
REASON the first line of the skip reason or of the exception (`-` when
there is none). A test that runs longer than --timeout seconds (default 60)
is interrupted and recorded as an error with the reason `timeout`.

--no-traffic makes the suite's completion polling helpers (tests.utils
_poll_cq and poll_cq_ex) raise SkipTest("needs the data path (issue 4)"),
for a device without a data path: a test that waits for a completion is
skipped instead of timing out.
"""
import argparse
import gzip
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
import types
import unittest

NO_DATA_PATH = 'needs the data path (issue 4)'
REASON_MAX = 150


class Timeout(BaseException):
    """A test ran longer than --timeout. A BaseException, so that the tests'
    own `except Exception` clauses do not swallow it; unittest records it as
    an error."""


def clean(text):
    """The first non-empty line of TEXT, without tabs, at most REASON_MAX
    characters; `-` when there is nothing."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    line = lines[0].replace('\t', ' ') if lines else '-'
    if len(line) > REASON_MAX:
        line = line[:REASON_MAX - 3] + '...'
    return line


class Result(unittest.TestResult):
    """Records one status per test (its first failure, error or skip wins
    over a later one and over success) and writes each test's line when it
    ends; a per-test alarm turns a hang into a `timeout` error."""

    def __init__(self, out, timeout, verbose):
        super().__init__()
        self.out = out
        self.timeout = timeout
        self.verbose = verbose
        self.current = {}
        self.records = []
        self.started = 0.0

    def _set(self, test, status, reason):
        tid = test.id()
        if tid not in self.current:
            self.current[tid] = (status, reason)
        elif self.current[tid][0] == 'pass' and status != 'pass':
            self.current[tid] = (status, reason)
        # Errors outside a test (setUpClass and the like) have no
        # startTest/stopTest of their own: write them at once.
        if not isinstance(test, unittest.TestCase):
            self._emit(tid)

    def _emit(self, tid):
        status, reason = self.current.pop(tid, ('error', 'no outcome recorded'))
        line = f'{tid}\t{status}\t{clean(reason)}'
        self.records.append(line)
        self.out.write(line + '\n')
        self.out.flush()
        if self.verbose:
            print(f'{line}\t{time.monotonic() - self.started:.1f}s', file=sys.stderr, flush=True)

    @staticmethod
    def _exc_reason(err):
        etype, value, _ = err
        if issubclass(etype, Timeout):
            return 'timeout'
        text = str(value)
        first = clean(text)
        name = etype.__name__
        return f'{name}: {first}' if first != '-' else name

    def startTest(self, test):
        super().startTest(test)
        self.started = time.monotonic()
        signal.alarm(self.timeout)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)
        self._emit(test.id())

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, 'pass', '-')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, 'fail', self._exc_reason(err))
        if self.verbose:
            traceback.print_exception(*err, limit=8, file=sys.stderr)

    def addError(self, test, err):
        super().addError(test, err)
        self._set(test, 'error', self._exc_reason(err))
        if self.verbose:
            traceback.print_exception(*err, limit=8, file=sys.stderr)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, 'skip', reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, 'pass', 'expected failure')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, 'fail', 'unexpected success')

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = 'fail' if issubclass(err[0], test.failureException) else 'error'
            self._set(test, kind, f'{subtest.id()}: {self._exc_reason(err)}')


def stage(src, dst):
    """Copies the suite from SRC to DST/tests, gunzipping *.gz files."""
    pkg = os.path.join(dst, 'tests')
    os.mkdir(pkg)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue
        if name.endswith('.gz'):
            with gzip.open(path, 'rb') as fin, open(os.path.join(pkg, name[:-3]), 'wb') as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(path, pkg)
    return pkg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dev', required=True, help='RDMA device')
    ap.add_argument('--gid', type=int, required=True, help='GID index (port 1)')
    ap.add_argument('--out', required=True, help='results file')
    ap.add_argument('--no-traffic', action='store_true',
                    help='skip tests that wait for a completion')
    ap.add_argument('--timeout', type=int, default=60, help='seconds per test')
    ap.add_argument('--src', default='/usr/share/doc/rdma-core/tests',
                    help='the installed suite')
    ap.add_argument('-v', '--verbose', action='store_true',
                    help='print each result and tracebacks to stderr')
    ap.add_argument('modules', nargs='+', metavar='MODULE')
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix='rdma-core-tests.')
    try:
        pkg = stage(args.src, tmp)
        # `from args_parser import parser` (base.py) needs the package
        # directory itself on the path, `from tests.x import y` its parent.
        sys.path[:0] = [tmp, pkg]
        # The package without its __init__.py, which would import every
        # test module.
        tests = types.ModuleType('tests')
        tests.__path__ = [pkg]
        tests.__file__ = os.path.join(pkg, '__init__.py')
        sys.modules['tests'] = tests

        sys.argv = [sys.argv[0], '--dev', args.dev, '--gid', str(args.gid)]
        from args_parser import parser
        parser.parse_args()

        import importlib
        mods = [importlib.import_module('tests.' + m) for m in args.modules]

        if args.no_traffic:
            import tests.utils as u

            def no_data_path(*_args, **_kwargs):
                raise unittest.SkipTest(NO_DATA_PATH)

            originals = (u._poll_cq, u.poll_cq_ex)
            # tests.utils' own helpers call these through its globals; a
            # test module that imported them by name gets its copy replaced.
            for name, mod in list(sys.modules.items()):
                if name == 'tests' or name.startswith('tests.'):
                    for attr, val in list(vars(mod).items()):
                        if any(val is f for f in originals):
                            setattr(mod, attr, no_data_path)

        def on_alarm(_sig, _frame):
            raise Timeout()

        signal.signal(signal.SIGALRM, on_alarm)

        loader = unittest.TestLoader()
        suite = unittest.TestSuite(loader.loadTestsFromModule(m) for m in mods)
        with open(args.out, 'w') as out:
            result = Result(out, args.timeout, args.verbose)
            t0 = time.monotonic()
            suite.run(result)
        counts = {}
        for line in result.records:
            s = line.split('\t')[1]
            counts[s] = counts.get(s, 0) + 1
        print(f'{args.dev}: {len(result.records)} tests in {time.monotonic() - t0:.0f}s: ' +
              ' '.join(f'{k} {v}' for k, v in sorted(counts.items())), file=sys.stderr)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
