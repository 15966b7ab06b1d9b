/** The part of autocannon's programmatic API the benchmarks use (the package ships no types). */
declare module "autocannon" {
  interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    /** Runs the load in worker threads, off the thread that serves. */
    workers?: number;
    /** Requests per second over all connections (a fixed load rather than as fast as possible). */
    overallRate?: number;
    body?: string;
  }
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    p50: number;
    p99: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    "2xx": number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
