declare module "*.css";

interface Window {
  // The page's controller, for the browser tests' and the benchmark's probes.
  iacCode?: import("./controller").Controller;
}
