/**
 * The M/M/c queue in closed form (Erlang's C formula), to check the capacity model against:
 * Poisson arrivals at `lambda`, `servers` servers with exponential service at rate `mu` each.
 */

/** The probability that an arrival waits, its mean wait in the queue, and its mean time in the system. */
export function erlangC(lambda: number, mu: number, servers: number) {
  const a = lambda / mu;
  const rho = a / servers;
  if (rho >= 1) throw new RangeError(`unstable: utilization ${rho.toFixed(3)} is not below 1`);
  // Sum of a^k / k! for k < c, and a^c / c!, built term by term to stay finite.
  let term = 1;
  let below = 0;
  for (let k = 0; k < servers; k++) {
    below += term;
    term *= a / (k + 1);
  }
  const top = term / (1 - rho);
  const waitProbability = top / (below + top);
  const meanWait = waitProbability / (servers * mu - lambda);
  return { waitProbability, meanWait, meanSojourn: meanWait + 1 / mu, utilization: rho };
}
