// Every operation through openapi-fetch, typed by openapi-typescript's output for the live document
// (./schema.ts). tests/api/test_openapi_clients.py compiles this with `tsc --strict`, runs it with node
// (argv: base URL, issued API key) and asserts on the JSON it prints. It must need no cast.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Difficulty = components["schemas"]["Difficulty"];

async function main(baseUrl: string, key: string): Promise<Record<string, unknown>> {
  const client = createClient<paths>({ baseUrl, headers: { "X-API-Key": key } });
  const seen: Record<string, unknown> = {};

  const health = await client.GET("/api/v2/health");
  if (!health.data) throw new Error("health failed");
  const exportKey: string = health.data.export.key;
  const lastError: string | null = health.data.sync.last_error;
  seen.health = { exportKey, lastError };

  const stats = await client.GET("/api/v2/stats");
  if (!stats.data) throw new Error("stats failed");
  seen.stats = { total: stats.data.total, easy: stats.data.by_difficulty.Easy };

  const record = await client.GET("/api/v2/puzzles/random");
  if (!record.data) throw new Error("random failed");
  const difficulty: Difficulty = record.data.difficulty;
  const same = await client.GET("/api/v2/puzzles/random", { params: { query: { difficulty } } });
  const lower = await client.GET("/api/v2/puzzles/random", { params: { query: { difficulty: "easy" } } });
  const usedAt: number | null | undefined = same.data?.used_at;
  seen.random = { difficulty, same: same.data?.difficulty, lower: lower.data?.difficulty, usedAt };

  const catalogue = await client.GET("/api/v2/techniques");
  if (!catalogue.data) throw new Error("techniques failed");
  const used = catalogue.data.techniques.filter((item) => item.puzzles > 0);
  const rare = used.reduce((a, b) => (b.puzzles < a.puzzles ? b : a));
  const practice = await client.GET("/api/v2/puzzles/random", {
    params: { query: { technique: rare.name, stars: record.data.stars ?? undefined } },
  });
  const bounded = await client.GET("/api/v2/puzzles/random", {
    params: { query: { min_score: 0, max_score: 1_000_000, difficulty: "expert" } },
  });
  const tooHigh = await client.GET("/api/v2/puzzles/random", { params: { query: { min_score: 2, max_score: 1 } } });
  seen.techniques = {
    count: catalogue.data.techniques.length,
    rare: rare.name,
    practice: practice.data?.techniques ?? practice.error?.error,
    bounded: bounded.data?.difficulty,
    tooHigh: { status: tooHigh.response.status, message: tooHigh.error?.error },
  };

  const today = await client.GET("/api/v2/puzzles/daily");
  const day: string = new Date().toISOString().slice(0, 10);
  const dated = await client.GET("/api/v2/puzzles/daily", { params: { query: { date: day } } });
  const easy = await client.GET("/api/v2/puzzles/daily", { params: { query: { difficulty: "easy" } } });
  const impossible = await client.GET("/api/v2/puzzles/daily", { params: { query: { date: "2026-02-30" } } });
  seen.daily = {
    today: today.data?.canonical_id,
    dated: dated.data?.canonical_id,
    easy: easy.data?.difficulty,
    impossible: { status: impossible.response.status, message: impossible.error?.error },
  };

  const id = record.data.canonical_id;
  const byId = await client.GET("/api/v2/puzzles/{id}", { params: { path: { id } } });
  const etag = byId.response.headers.get("etag") ?? "";
  const again = await client.GET("/api/v2/puzzles/{id}", { params: { path: { id }, header: { "If-None-Match": etag } } });
  seen.puzzle = { code: byId.data?.canonical_id, again: again.response.status };

  const solution = await client.GET("/api/v2/puzzles/{id}/solution", { params: { path: { id } } });
  seen.solution = { length: solution.data?.solution.length };

  const image = await client.GET("/api/v2/puzzles/{id}/image", {
    params: { path: { id }, query: { variant: "solution" } },
    parseAs: "arrayBuffer",
  });
  const png: ArrayBuffer | undefined = image.data;
  seen.image = { size: png?.byteLength, type: image.response.headers.get("content-type") };
  const svg = await client.GET("/api/v2/puzzles/{id}/image", {
    params: { path: { id }, query: { format: "svg", size: 300 } },
    parseAs: "text",
  });
  const text: string | undefined = svg.data;
  seen.svg = { head: text?.slice(0, 80), type: svg.response.headers.get("content-type") };

  const missing = await client.GET("/api/v2/puzzles/{id}", { params: { path: { id: "UNKNOWN000000" } } });
  const message: string | undefined = missing.error?.error;
  seen.missing = { status: missing.response.status, message };

  const exports = await client.GET("/api/v2/pool-exports");
  seen.exports = { keys: exports.data?.objects.map((item) => item.key) };
  const sha256: string | null | undefined = exports.data?.objects[0]?.sha256;
  const exportName = exports.data?.objects[0]?.url.split("/").pop() ?? "";
  const download = await client.GET("/api/v2/pool-exports/{key}", { params: { path: { key: exportName } }, parseAs: "arrayBuffer" });
  seen.download = { status: download.response.status, checksum: download.response.headers.get("x-checksum-sha256"), sha256 };

  const set = await client.GET("/api/v2/puzzles", { params: { query: { count: 4, seed: 11, symmetry: "rotational-180" } } });
  const next: number | null | undefined = set.data?.next_offset;
  seen.set = { codes: set.data?.puzzles.map((puzzle) => puzzle.canonical_id), next };
  const archive = await client.GET("/api/v2/puzzles/daily/archive", { params: { query: { from: "2026-01-01", to: "2026-01-02" } } });
  seen.archive = archive.data?.days.map((day) => day.date);
  const picture = await client.GET("/api/v2/puzzles/daily/image", { params: { query: { tz: "Europe/Paris" } }, redirect: "manual" });
  const random = await client.GET("/api/v2/puzzles/random/image", { params: { query: { seed: 3 } }, redirect: "manual" });
  seen.redirects = [picture.response.status, random.response.status];

  const activity = await client.GET("/api/v2/stats/activity");
  const plays: number | undefined = activity.data?.plays.total;
  seen.activity = { plays, solutions: activity.data?.downloads.solution };

  const doc = await client.GET("/api/v2/openapi.json");
  const version: string | undefined = doc.data?.info.version;
  seen.openapi = { openapi: doc.data?.openapi, version };
  return seen;
}

main(process.argv[2] ?? "", process.argv[3] ?? "").then(
  (seen) => console.log(JSON.stringify(seen)),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
