// The API client: the few unversioned /api/puzzles/... calls the page makes, the /api/v2/grids/... ones (a pasted
// puzzle, its hints: rate limited as any client's), and the checks on what comes back. Every failure is an
// ApiError whose message a player can read; `status` is 0 when no HTTP answer came.

export class ApiError extends Error {
  /** `body`: the error's JSON body (its `status`, `cells`...), if any; `retryAfter`: the seconds a 429 or 503
   *  says to wait, or null. */
  constructor(message, status, { body = null, retryAfter = null } = {}) {
    super(message);
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

function retryAfter(response, body) {
  const seconds = Number(response.headers?.get?.("retry-after") ?? body?.retry_after_seconds);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}

/** GET a JSON body; `fetchImpl` is there for tests (the page uses the browser's fetch). */
export async function getJson(path, fetchImpl = globalThis.fetch) {
  let response;
  try {
    response = await fetchImpl(path, { headers: { accept: "application/json" } });
  } catch {
    throw new ApiError("Could not reach the server: it may be stopped, or you may be offline.", 0);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = body?.error ?? `the server answered ${response.status}`;
    throw new ApiError(message, response.status, { body, retryAfter: retryAfter(response, body) });
  }
  if (body === null) throw new ApiError("The server sent an answer this page cannot read.", response.status);
  return body;
}

/** The path of a puzzle by its code (`{ id }`), the puzzle of the day (`{ daily: true }`), or a random one
 *  (`{ difficulty, technique }`, each "" or absent for any). */
export function puzzlePath(request) {
  if (request.id) return `/api/puzzles/${encodeURIComponent(request.id)}`;
  const query = new URLSearchParams();
  if (request.difficulty) query.set("difficulty", request.difficulty);
  if (request.technique) query.set("technique", request.technique);
  const search = query.toString();
  return `/api/puzzles/${request.daily ? "daily" : "random"}${search ? `?${search}` : ""}`;
}

/** True for a record the page can play: a code and an 81-cell puzzle. */
export function validRecord(record) {
  return (
    typeof record?.canonical_id === "string" &&
    typeof record.puzzle === "string" &&
    /^[1-9.0]{81}$/.test(record.puzzle)
  );
}

/** The puzzle record for a request (see `puzzlePath`). */
export async function fetchPuzzle(request, fetchImpl = globalThis.fetch) {
  const record = await getJson(puzzlePath(request), fetchImpl);
  if (!validRecord(record)) throw new ApiError("The server sent a puzzle this page cannot read.", 0);
  return record;
}

/** A puzzle's solution as its 81-digit string. */
export async function fetchSolution(id, fetchImpl = globalThis.fetch) {
  const body = await getJson(`/api/puzzles/${encodeURIComponent(id)}/solution`, fetchImpl);
  if (typeof body.solution !== "string" || !/^[1-9]{81}$/.test(body.solution)) throw new ApiError("bad solution", 0);
  return body.solution;
}

/** The technique catalogue: `[{ name, difficulty, score, puzzles }, ...]`. */
export async function fetchTechniques(fetchImpl = globalThis.fetch) {
  const body = await getJson("/api/v1/techniques", fetchImpl);
  if (!Array.isArray(body.techniques)) throw new ApiError("The server sent a catalogue this page cannot read.", 0);
  return body.techniques;
}

/** The pool's counts (`total`, `by_difficulty`). */
export const fetchStats = (fetchImpl = globalThis.fetch) => getJson("/api/v1/stats", fetchImpl);

/** The link to a puzzle's picture, `variant` "puzzle" or "solution"; a PNG unless `format` ("svg", "webp") says. */
export const imageUrl = (id, variant, format) =>
  `/api/puzzles/${encodeURIComponent(id)}/image?variant=${variant}${format ? `&format=${format}` : ""}`;

/** The print sheet of one puzzle: the puzzle, then its answer. */
export const printUrl = (id) => `/print?ids=${encodeURIComponent(id)}`;

/** `count` distinct puzzles (`difficulty` "" for any) in one request: `{ seed, puzzles: [record, ...] }`. */
export async function fetchSet(count, difficulty, fetchImpl = globalThis.fetch) {
  const query = new URLSearchParams({ count: String(count) });
  if (difficulty) query.set("difficulty", difficulty);
  const body = await getJson(`/api/puzzles?${query}`, fetchImpl);
  if (!Array.isArray(body.puzzles) || !body.puzzles.every(validRecord)) {
    throw new ApiError("The server sent a set this page cannot read.", 0);
  }
  return body;
}

/** The path that asks for any grid (81 cells, "." for empty): its record when the pool holds it in any layout,
 *  else its live grade. Empty cells go as "0", so that no path segment is made of dots. */
export const gridPath = (grid) => `/api/v2/grids/${grid.replaceAll(".", "0")}`;

/** The answer for a pasted grid: a record (`in_pool`, `canonical_id`, `puzzle`, `solution`, `solve_path`...). */
export async function fetchGrid(grid, fetchImpl = globalThis.fetch) {
  const body = await getJson(gridPath(grid), fetchImpl);
  if (!validRecord(body) || typeof body.solution !== "string" || !/^[1-9]{81}$/.test(body.solution)) {
    throw new ApiError("The server sent an answer this page cannot read.", 0);
  }
  return body;
}

/** The player's board as the hint asks for it: 81 digits, "0" for an empty cell. */
export const boardText = (values) => values.map((v) => (v ? String(v) : "0")).join("");

/** The pencil marks (a bit mask per cell, bit d for digit d) of the empty cells, as the hint's `candidates`
 *  ("," between cells, the digits marked in each); null when no empty cell has any. */
export function candidatesText(values, marks) {
  const fields = values.map((v, i) => {
    if (v || !marks[i]) return "";
    let digits = "";
    for (let d = 1; d <= 9; d++) if (marks[i] & (1 << d)) digits += d;
    return digits;
  });
  return fields.some(Boolean) ? fields.join(",") : null;
}

/** The next step for the board `values` (with its pencil `marks`) of pasted `grid`: the API's Hint object
 *  (`status` "fix", "finished" or "step"). */
export async function fetchGridHint(grid, values, marks, fetchImpl = globalThis.fetch) {
  const query = new URLSearchParams({ board: boardText(values) });
  const candidates = candidatesText(values, marks);
  if (candidates) query.set("candidates", candidates);
  const body = await getJson(`${gridPath(grid)}/hint?${query}`, fetchImpl);
  if (!["fix", "finished", "step"].includes(body.status) || (body.status === "step" && !body.step)) {
    throw new ApiError("The server sent a hint this page cannot read.", 0);
  }
  return body;
}
