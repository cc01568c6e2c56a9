// What the hint panel says (static/hints.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { apiHint, hintFailureView, hintNews, hintView, legend } from "../../../src/sudokupool/web/static/hints.js";

const PAIR = {
  technique: "Pointing pair",
  explanation: "In box 1, 2 can only go in row 1, so it goes from the rest of row 1.",
  houses: ["box 1", "row 1"],
  cells: ["r1c1", "r1c2", "r1c7"],
  eliminations: [{ cell: "r1c7", digit: 2 }],
};

test("a step shows its place in the path, its explanation, its legend and can be applied", () => {
  assert.deepEqual(hintView({ kind: "step", index: 2, step: PAIR }, 30), {
    technique: "Step 3 of 30: Pointing pair",
    text: PAIR.explanation,
    apply: true,
    legend: [
      ["hint-house", "box 1, row 1"],
      ["hint-cell", "cells that explain it"],
      ["hint-elim", "candidates to remove"],
    ],
  });
});

test("a mistake names its cells and cannot be applied", () => {
  const one = hintView({ kind: "mistake", cells: [2] }, 30);
  assert.equal(one.technique, "Fix a mistake first");
  assert.equal(one.text, "r1c3 does not match the solution (marked in red). Erase before the next step.");
  assert.deepEqual([one.apply, one.legend], [false, []]);
  const two = hintView({ kind: "mistake", cells: [2, 80] }, 30);
  assert.equal(two.text, "r1c3, r9c9 do not match the solution (marked in red). Erase before the next step.");
});

test("a finished path and a missing one say so", () => {
  assert.deepEqual(hintView({ kind: "done" }, 30), {
    technique: "No step left",
    text: "Every step of the solve path is done: fill in what is left.",
    apply: false,
    legend: [],
  });
  const none = hintView({ kind: "none" }, 0);
  assert.equal(none.technique, "No explained path");
  assert.equal(none.apply, false);
});

test("the legend lists only the parts a step has", () => {
  // A single: its one cell is the placement, so no "cells that explain it" key.
  const single = { technique: "Naked single", cells: ["r1c3"], placements: [{ cell: "r1c3", digit: 4 }] };
  assert.deepEqual(legend(single), [["hint-place", "to fill"]]);
  assert.deepEqual(legend({ technique: "Nothing to show" }), []);
});

test("a hint is announced by its title, then its text", () => {
  const view = hintView({ kind: "step", index: 2, step: PAIR }, 30);
  assert.equal(hintNews(view), `Hint: Step 3 of 30: Pointing pair. ${PAIR.explanation}`);
});

test("the server's hint for a pasted puzzle reads as the page's own", () => {
  const fix = apiHint({ status: "fix", wrong: ["r2c1", "r1c3"], conflicting: ["r1c3", "r9c9"] });
  assert.deepEqual(fix, { kind: "mistake", cells: [2, 9, 80] });
  assert.equal(hintView(fix, 0).technique, "Fix a mistake first");
  assert.deepEqual(apiHint({ status: "finished", wrong: [], conflicting: [] }), { kind: "done" });
  const step = apiHint({ status: "step", wrong: [], conflicting: [], step: PAIR });
  assert.deepEqual(step, { kind: "step", step: PAIR });
  // Found from the board, not a place in a path: no "Step n of m".
  assert.equal(hintView(step, 40).technique, "Next step: Pointing pair");
  assert.equal(hintView(step, 40).apply, true);
  const failed = hintFailureView("The server is busy with other puzzles. Try again in 3 seconds.");
  assert.equal(failed.apply, false);
  assert.equal(hintNews(failed), "Hint: No hint just now. The server is busy with other puzzles. Try again in 3 seconds.");
});
