"""Code that drives the product from outside: the demo, benchmarks, load and
comparison tools. `bin/` scripts call into it; nothing in the product imports it."""
