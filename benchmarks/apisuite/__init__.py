"""The array API test suite's harness: see ``benchmarks/array_api_suite.py``."""
