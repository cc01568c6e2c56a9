// What the page says (static/labels.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  capitalise,
  cellLabel,
  checkMessage,
  detailRows,
  embedSnippet,
  embeddedId,
  engineFailure,
  entryNews,
  gridUrl,
  hasPuzzles,
  loadFailure,
  markNews,
  pastedNews,
  puzzleCode,
  requestedGrid,
  requestedId,
  statsLine,
  stepNews,
  successText,
  techniqueOptions,
} from "../../../src/sudokupool/web/static/labels.js";

test("a cell's label names it as the solve path does, says what it holds and what is flagged", () => {
  assert.equal(cellLabel(0, 5, true, 0, []), "r1c1, given 5");
  assert.equal(cellLabel(13, 7, false, 0, ["conflict"]), "r2c5, 7, conflict");
  assert.equal(cellLabel(80, 0, false, (1 << 1) | (1 << 4), []), "r9c9, empty, pencil marks 1 4");
  assert.equal(cellLabel(80, 0, false, 0, []), "r9c9, empty");
});

test("the news of a move names the cell the same way, with the cells a digit clashes with", () => {
  assert.equal(entryNews(13, 7, []), "r2c5: 7.");
  assert.equal(entryNews(13, 7, [9, 40]), "r2c5: 7. Conflict with r2c1, r5c5.");
  assert.equal(markNews(0, 3, true), "r1c1: pencil mark 3 added.");
  assert.equal(markNews(0, 3, false), "r1c1: pencil mark 3 removed.");
});

test("an applied step's news lists what it placed and, by digit, the candidates it removed", () => {
  assert.equal(stepNews({ placements: [{ cell: "r5c2", digit: 7 }], eliminations: [] }), "Step applied: r5c2 is 7.");
  const removal = {
    placements: [],
    eliminations: [
      { cell: "r1c7", digit: 2 },
      { cell: "r3c4", digit: 5 },
      { cell: "r1c8", digit: 2 },
    ],
  };
  assert.equal(stepNews(removal), "Step applied: 2 removed from r1c7, r1c8; 5 removed from r3c4.");
  assert.equal(stepNews({}), "Step applied: nothing to change.");
});

test("the details list what the record has", () => {
  const full = {
    difficulty: "hard",
    stars: 4,
    tier: "hard",
    score: 812,
    clue_count: 24,
    symmetry: "rotational",
    hardest_technique: "X-Wing",
    techniques: ["Naked single", "X-Wing"],
    solve_path: [{}, {}, {}],
  };
  assert.deepEqual(detailRows(full, 99), [
    ["Difficulty", "hard"],
    ["Stars", "★★★★☆", "4 of 5 stars"],
    ["Tier", "hard (score 812)"],
    ["Clues", "24"],
    ["Symmetry", "rotational"],
    ["Hardest technique", "X-Wing"],
    ["Techniques", "Naked single, X-Wing"],
    ["Solve path", "3 steps"],
  ]);
  assert.deepEqual(detailRows({ difficulty: "easy", tier: "easy" }, 30), [
    ["Difficulty", "easy"],
    ["Tier", "easy"],
    ["Clues", "30"],
  ]);
});

test("the requested code comes from /p/{code} or ?id=", () => {
  assert.equal(requestedId("/p/HTZYPM3WFE49J", ""), "HTZYPM3WFE49J");
  assert.equal(requestedId("/p/%20ABC%20", ""), "ABC");
  assert.equal(requestedId("/", "?id=+ABC+"), "ABC");
  assert.equal(requestedId("/", "?id="), null);
  assert.equal(requestedId("/", ""), null);
  assert.equal(requestedId("/p/A/B", ""), null);
});

test("a link that is no valid percent-encoding asks for the code as written, rather than throw", () => {
  assert.equal(requestedId("/p/%E0%A4%A", ""), "%E0%A4%A");
  assert.equal(requestedId("/p/%ZZ", ""), "%ZZ");
  assert.equal(embeddedId("/embed/%E0%A4%A"), "%E0%A4%A");
  assert.equal(embeddedId("/embed/%ZZ"), "%ZZ");
});

test("capitalise raises the first letter only", () => {
  assert.equal(capitalise("no puzzle matches"), "No puzzle matches");
  assert.equal(capitalise(""), "");
});

test("Check says how many entries are wrong, else how many cells are left", () => {
  assert.equal(checkMessage(1, 40), "1 entry does not match the solution (marked in red).");
  assert.equal(checkMessage(3, 40), "3 entries do not match the solution (marked in red).");
  assert.equal(checkMessage(0, 1), "Everything so far is correct; 1 cell to go.");
  assert.equal(checkMessage(0, 12), "Everything so far is correct; 12 cells to go.");
  assert.equal(checkMessage(0, 0), "Everything is correct.");
});

test("the success banner gives the time and what was revealed", () => {
  assert.equal(successText({ revealedAll: false, revealed: 0, time: "04:05" }), "Solved in 04:05. Well done!");
  assert.equal(
    successText({ revealedAll: false, revealed: 2, time: "04:05" }),
    "Solved in 04:05 (with 2 revealed). Well done!",
  );
  assert.equal(
    successText({ revealedAll: true, revealed: 51, time: "00:10" }),
    "The solution is revealed. Try another puzzle!",
  );
});

test("a failed load says why and offers the request that can work", () => {
  const unknown = loadFailure({ status: 404, message: "no puzzle" }, { id: "ABC", push: true }, false);
  assert.deepEqual(unknown, {
    text: "No puzzle has the code “ABC”. Check the code, or play another puzzle.",
    label: "Play a random puzzle",
    retry: { push: true },
  });
  const expert = { difficulty: "expert" };
  const empty = loadFailure({ status: 404, message: "no puzzle matches difficulty expert" }, expert, true);
  assert.deepEqual(empty, {
    text: "No puzzle matches difficulty expert. Your current game is still here.",
    label: "Play any puzzle",
    retry: { push: true },
  });
  const request = { difficulty: "easy", push: true };
  assert.deepEqual(loadFailure({ status: 503, message: "storage is unreachable" }, request, false), {
    text: "The server could not give a puzzle (storage is unreachable).",
    label: "Try again",
    retry: request,
  });
  // No status: the server did not answer; the message says so.
  assert.equal(
    loadFailure({ message: "The server did not answer." }, request, true).text,
    "The server did not answer. Your current game is still here.",
  );
});

test("the pool's counts and which difficulties have puzzles", () => {
  const stats = { total: 12000, by_difficulty: { Easy: 10000, Hard: 2000, Expert: 0 } };
  assert.equal(statsLine(stats), "The pool holds 12,000 puzzles: 10,000 Easy · 2,000 Hard · 0 Expert.");
  assert.equal(statsLine({ total: 0 }), "The pool holds 0 puzzles.");
  assert.deepEqual(
    ["", "easy", "hard", "expert", "medium"].map((d) => hasPuzzles(stats, d)),
    [true, true, true, false, false],
  );
});

test("a typed code is spelt as the API spells it", () => {
  assert.equal(puzzleCode(" htzy-pm3w fe49j "), "HTZYPM3WFE49J");
  assert.equal(puzzleCode("--"), "");
});

test("the technique picker offers the techniques the pool has puzzles for, with their counts", () => {
  const catalogue = [
    { name: "Full House", difficulty: "Easy", score: 4, puzzles: 2400 },
    { name: "Death Blossom", difficulty: "Expert", score: 360, puzzles: 0 },
    { name: "X-Wing", difficulty: "Hard", score: 140, puzzles: 284 },
    { difficulty: "Hard", puzzles: 3 },
  ];
  assert.deepEqual(techniqueOptions(catalogue), [
    { value: "Full House", text: "Full House (2,400)" },
    { value: "X-Wing", text: "X-Wing (284)" },
  ]);
  assert.deepEqual(techniqueOptions([]), []);
});

test("the embedded player reads its code from /embed/{code} and nothing else", () => {
  assert.equal(embeddedId("/embed/HTZYPM3WFE49J"), "HTZYPM3WFE49J");
  assert.equal(embeddedId("/embed/ab%20c"), "ab c");
  assert.equal(embeddedId("/embed/"), null);
  assert.equal(embeddedId("/embed/a/b"), null);
  assert.equal(embeddedId("/p/HTZYPM3WFE49J"), null);
});

test("the embed snippet is one iframe of the embedded player, with a title and no border", () => {
  const html = embedSnippet("https://sudoku.example", "HTZYPM3WFE49J");
  assert.equal(
    html,
    '<iframe src="https://sudoku.example/embed/HTZYPM3WFE49J" title="Sudoku puzzle HTZYPM3WFE49J" ' +
      'width="380" height="540" style="border:0;max-width:100%" loading="lazy"></iframe>',
  );
  // A code is never markup: quotes and angle brackets stay escaped.
  assert.ok(!embedSnippet("https://x", '"><script>').includes("<script>"));
});

test("a pasted puzzle has an address of its own, read back as the grid", () => {
  const grid = `4.....8.5${".".repeat(72)}`;
  assert.equal(gridUrl(grid), `/?grid=${grid}`);
  assert.equal(requestedGrid(new URL(gridUrl(grid), "http://page").search), grid);
  assert.equal(requestedGrid("?id=ABC"), null);
  assert.equal(requestedGrid("?grid=%20"), null);
});

test("why the engine gave no grade or hint is said in a player's words, with how long to wait", () => {
  const failure = (status, body, retryAfter = null, message = body?.error ?? "x") =>
    engineFailure(Object.assign(new Error(message), { status, body, retryAfter }));
  const clash = { error: "the givens clash: digit 5 appears twice in row 1", status: "invalid", cells: ["r1c1", "r1c5"] };
  assert.equal(
    failure(400, clash),
    "This is not a puzzle that can be played: the givens clash: digit 5 appears twice in row 1 (r1c1, r1c5).",
  );
  assert.match(failure(422, { error: "no solution", status: "no-solution", cells: [] }), /^This puzzle has no solution/);
  assert.match(
    failure(422, { error: "several", status: "multiple-solutions", cells: [] }),
    /^This puzzle has more than one solution/,
  );
  const marks = { error: "candidates: the pencil marks of r3c4 leave out a digit it needs", cells: ["r3c4"] };
  assert.equal(failure(422, marks), "Your pencil marks (r3c4) leave out a digit that cell needs: fix them first.");
  assert.equal(failure(503, { error: "busy" }, 7), "The server is busy with other puzzles. Try again in 7 seconds.");
  assert.equal(failure(503, { error: "busy" }, 1), "The server is busy with other puzzles. Try again in 1 second.");
  assert.equal(failure(503, null), "The server is busy with other puzzles. Try again in a moment.");
  assert.equal(failure(429, { error: "rate limit exceeded" }, 12), "You have asked for a lot this minute. Try again in 12 seconds.");
  assert.equal(failure(0, null, null, "Could not reach the server."), "Could not reach the server.");
  assert.equal(failure(500, { error: "internal error" }), "The server could not answer (internal error).");
});

test("a pasted puzzle's news says whether the pool has it", () => {
  const found = { in_pool: true, canonical_id: "ABC", difficulty: "Hard", solve_path: [] };
  assert.equal(pastedNews(found), "Found in the pool (Hard, code ABC): the puzzle is as you pasted it.");
  const graded = { in_pool: false, canonical_id: "XYZ", difficulty: "Expert", solve_path: [{}, {}] };
  assert.equal(pastedNews(graded), "Graded: Expert, 2 steps. Hints come from the server.");
});
