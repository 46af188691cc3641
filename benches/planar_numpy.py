"""numpy's float planar Laplace (the way location-privacy code samples it: a Gamma(2, 1/ε)
radius and a uniform angle, Andrés et al. 2013 Theorem 4.1), N draws around Rome at ε = 1/km,
for `benches/planar_laplace.sh` (the yardstick of the exact sampler's throughput)."""
import json
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
rng = np.random.default_rng()
t = time.perf_counter()
r = rng.gamma(2.0, 1.0, n)            # km, ε = 1 per km
a = rng.uniform(0.0, 2 * np.pi, n)
lat = 41.9028 + r * np.sin(a) / 111.195
lon = 12.4964 + r * np.cos(a) / (111.195 * np.cos(np.radians(41.9028)))
s = time.perf_counter() - t
print(json.dumps({"draws": n, "seconds": s, "per_second": n / s, "mean_lat": float(lat.mean())}))
