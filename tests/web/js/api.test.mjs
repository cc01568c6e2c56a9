// The API client (static/api.js) against stand-in fetch functions.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as api from "../../../src/sudokupool/web/static/api.js";

const PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";

/** A fetch that records the paths asked for and answers `status` with `body` (a string is sent as is). */
function answering(status, body) {
  const asked = [];
  const fetchImpl = async (path, init) => {
    asked.push([path, init.headers.accept]);
    return new Response(typeof body === "string" ? body : JSON.stringify(body), { status });
  };
  return { asked, fetchImpl };
}

async function rejects(promise, message, status) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof api.ApiError);
    assert.equal(error.message, message);
    assert.equal(error.status, status);
    return true;
  });
}

test("puzzles are asked for by code or at random, by difficulty", () => {
  assert.equal(api.puzzlePath({ id: "AB C/1" }), "/api/puzzles/AB%20C%2F1");
  assert.equal(api.puzzlePath({ difficulty: "hard" }), "/api/puzzles/random?difficulty=hard");
  assert.equal(api.puzzlePath({ difficulty: "" }), "/api/puzzles/random");
  assert.equal(api.puzzlePath({}), "/api/puzzles/random");
  assert.equal(api.imageUrl("ABC", "solution"), "/api/puzzles/ABC/image?variant=solution");
  assert.equal(api.imageUrl("ABC", "puzzle", "svg"), "/api/puzzles/ABC/image?variant=puzzle&format=svg");
  assert.equal(api.printUrl("A B"), "/print?ids=A%20B");
});

test("a good answer comes back as its JSON body", async () => {
  const { asked, fetchImpl } = answering(200, { canonical_id: "ABC", puzzle: PUZZLE });
  assert.deepEqual(await api.fetchPuzzle({ id: "ABC" }, fetchImpl), { canonical_id: "ABC", puzzle: PUZZLE });
  assert.deepEqual(asked, [["/api/puzzles/ABC", "application/json"]]);
});

test("an error answer carries the server's message and status", async () => {
  await rejects(api.getJson("/x", answering(404, { error: "no puzzle matches" }).fetchImpl), "no puzzle matches", 404);
  await rejects(api.getJson("/x", answering(502, "<html>").fetchImpl), "the server answered 502", 502);
});

test("no answer, or one the page cannot read, is a clear error", async () => {
  const offline = async () => {
    throw new TypeError("Failed to fetch");
  };
  await rejects(api.getJson("/x", offline), "Could not reach the server: it may be stopped, or you may be offline.", 0);
  await rejects(api.getJson("/x", answering(200, "not json").fetchImpl), "The server sent an answer this page cannot read.", 200);
  const unreadable = "The server sent a puzzle this page cannot read.";
  await rejects(api.fetchPuzzle({}, answering(200, { canonical_id: "ABC", puzzle: "123" }).fetchImpl), unreadable, 0);
  await rejects(api.fetchPuzzle({}, answering(200, [1]).fetchImpl), unreadable, 0);
});

test("a solution is its 81-digit string", async () => {
  const digits = "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
  const { asked, fetchImpl } = answering(200, { solution: digits });
  assert.equal(await api.fetchSolution("A B", fetchImpl), digits);
  assert.deepEqual(asked, [["/api/puzzles/A%20B/solution", "application/json"]]);
  await rejects(api.fetchSolution("ABC", answering(200, { solution: PUZZLE }).fetchImpl), "bad solution", 0);
});

test("stats come from /api/v1/stats", async () => {
  const { asked, fetchImpl } = answering(200, { total: 3, by_difficulty: { easy: 3 } });
  assert.deepEqual(await api.fetchStats(fetchImpl), { total: 3, by_difficulty: { easy: 3 } });
  assert.equal(asked[0][0], "/api/v1/stats");
});

test("the puzzle of the day and a technique's puzzles have their own paths", () => {
  assert.equal(api.puzzlePath({ daily: true }), "/api/puzzles/daily");
  assert.equal(api.puzzlePath({ daily: true, difficulty: "easy" }), "/api/puzzles/daily?difficulty=easy");
  assert.equal(api.puzzlePath({ technique: "X-Wing" }), "/api/puzzles/random?technique=X-Wing");
  // Spaces go as `+`, which the API reads as spaces; `&` and `=` cannot break out of the value.
  assert.equal(
    api.puzzlePath({ technique: "Locked Candidates Type 1 (Pointing)" }),
    "/api/puzzles/random?technique=Locked+Candidates+Type+1+%28Pointing%29",
  );
  assert.equal(api.puzzlePath({ technique: "a&b=c", difficulty: "hard" }), "/api/puzzles/random?difficulty=hard&technique=a%26b%3Dc");
  assert.equal(api.puzzlePath({ id: "ABC", daily: true }), "/api/puzzles/ABC");
});

test("the technique catalogue comes from /api/v1/techniques", async () => {
  const techniques = [{ name: "X-Wing", difficulty: "Hard", score: 140, puzzles: 3 }];
  const { asked, fetchImpl } = answering(200, { techniques });
  assert.deepEqual(await api.fetchTechniques(fetchImpl), techniques);
  assert.deepEqual(asked, [["/api/v1/techniques", "application/json"]]);
  const unreadable = "The server sent a catalogue this page cannot read.";
  await rejects(api.fetchTechniques(answering(200, { techniques: "none" }).fetchImpl), unreadable, 0);
  await rejects(api.fetchTechniques(answering(429, { error: "rate limit exceeded" }).fetchImpl), "rate limit exceeded", 429);
});

test("a set is asked for in one request and its records checked", async () => {
  const { fetchSet } = await import("../../../src/sudokupool/web/static/api.js");
  const asked = [];
  const record = { canonical_id: "X", puzzle: ".".repeat(81) };
  const fake = async (path) => {
    asked.push(path);
    return new Response(JSON.stringify({ seed: 1, puzzles: [record] }), { status: 200 });
  };
  const body = await fetchSet(20, "hard", fake);
  assert.deepEqual(asked, ["/api/puzzles?count=20&difficulty=hard"]);
  assert.deepEqual(body.puzzles, [record]);
  const bad = async () => new Response(JSON.stringify({ puzzles: [{ canonical_id: 1 }] }), { status: 200 });
  await assert.rejects(fetchSet(10, "", bad), /cannot read/);
});

test("a pasted grid is asked for with zeros, its answer checked, and its errors keep their body and wait", async () => {
  assert.equal(api.gridPath(`${PUZZLE.slice(0, 80)}.`), `/api/v2/grids/${PUZZLE.replaceAll(".", "0").slice(0, 80)}0`);
  const solution = "5".repeat(81);
  const { asked, fetchImpl } = answering(200, { canonical_id: "ABC", puzzle: PUZZLE, solution, in_pool: false });
  assert.equal((await api.fetchGrid(PUZZLE, fetchImpl)).solution, solution);
  assert.equal(asked[0][0], `/api/v2/grids/${PUZZLE.replaceAll(".", "0")}`);
  await rejects(
    api.fetchGrid(PUZZLE, answering(200, { canonical_id: "ABC", puzzle: PUZZLE }).fetchImpl),
    "The server sent an answer this page cannot read.",
    0,
  );
  const clash = { error: "the givens clash: digit 5 appears twice in row 1", status: "invalid", cells: ["r1c1", "r1c5"] };
  await assert.rejects(api.fetchGrid(PUZZLE, answering(400, clash).fetchImpl), (error) => {
    assert.equal(error.status, 400);
    assert.deepEqual(error.body, clash);
    assert.equal(error.retryAfter, null);
    return true;
  });
  const busy = async () =>
    new Response(JSON.stringify({ error: "busy" }), { status: 503, headers: { "Retry-After": "7" } });
  await assert.rejects(api.fetchGrid(PUZZLE, busy), (error) => error.status === 503 && error.retryAfter === 7);
  const limited = answering(429, { error: "rate limit exceeded", retry_after_seconds: 12 }).fetchImpl;
  await assert.rejects(api.fetchGrid(PUZZLE, limited), (error) => error.status === 429 && error.retryAfter === 12);
});

test("a hint is asked for with the board and the empty cells' pencil marks", async () => {
  const values = Array(81).fill(0);
  values[0] = 5;
  const marks = Array(81).fill(0);
  marks[0] = 1 << 3; // under an entry: not sent
  marks[2] = (1 << 2) | (1 << 7);
  assert.equal(api.boardText(values), `5${"0".repeat(80)}`);
  assert.equal(api.candidatesText(values, marks), `,,27${",".repeat(78)}`);
  assert.equal(api.candidatesText(values, Array(81).fill(0)), null);
  const step = { technique: "Naked Single", placements: [], eliminations: [] };
  const { asked, fetchImpl } = answering(200, { status: "step", wrong: [], conflicting: [], step });
  assert.deepEqual((await api.fetchGridHint(PUZZLE, values, marks, fetchImpl)).step, step);
  const url = new URL(asked[0][0], "http://page");
  assert.equal(url.pathname, `/api/v2/grids/${PUZZLE.replaceAll(".", "0")}/hint`);
  assert.equal(url.searchParams.get("board"), api.boardText(values));
  assert.equal(url.searchParams.get("candidates"), api.candidatesText(values, marks));
  const plain = answering(200, { status: "finished", wrong: [], conflicting: [] });
  await api.fetchGridHint(PUZZLE, values, Array(81).fill(0), plain.fetchImpl);
  assert.equal(new URL(plain.asked[0][0], "http://page").searchParams.has("candidates"), false);
  await rejects(
    api.fetchGridHint(PUZZLE, values, marks, answering(200, { status: "step" }).fetchImpl),
    "The server sent a hint this page cannot read.",
    0,
  );
});
