// What the page says (static/labels.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { capitalise, cellLabel, detailRows, requestedId } from "../../src/sudokupool/static/labels.js";

test("a cell's label says where it is, what it holds and what is flagged", () => {
  assert.equal(cellLabel(0, 5, true, 0, []), "Row 1, column 1, given 5");
  assert.equal(cellLabel(13, 7, false, 0, ["conflict"]), "Row 2, column 5, 7, conflict");
  assert.equal(cellLabel(80, 0, false, (1 << 1) | (1 << 4), []), "Row 9, column 9, empty, pencil marks 1 4");
  assert.equal(cellLabel(80, 0, false, 0, []), "Row 9, column 9, empty");
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

test("capitalise raises the first letter only", () => {
  assert.equal(capitalise("no puzzle matches"), "No puzzle matches");
  assert.equal(capitalise(""), "");
});
