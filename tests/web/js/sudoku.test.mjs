// Grid arithmetic and hints (static/sudoku.js), on the well-known puzzle from Wikipedia's Sudoku article.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as s from "../../../src/sudokupool/web/static/sudoku.js";

const PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
const SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
const digits = (text) => Array.from(text, Number);

/** A solve path of one single per empty cell, in cell order. */
const singlesPath = () =>
  s.CELLS.filter((i) => PUZZLE[i] === ".").map((i) => ({
    technique: "Naked single",
    explanation: `only ${SOLUTION[i]} fits`,
    cells: [s.cellName(i)],
    placements: [{ cell: s.cellName(i), digit: Number(SOLUTION[i]) }],
  }));

test("cells map to rows, columns, boxes and names", () => {
  assert.deepEqual([s.rowOf(40), s.colOf(40), s.boxOf(40)], [4, 4, 4]);
  assert.deepEqual([s.rowOf(80), s.colOf(80), s.boxOf(80)], [8, 8, 8]);
  assert.equal(s.boxOf(5), 1);
  assert.equal(s.cellName(0), "r1c1");
  assert.equal(s.cellName(13), "r2c5");
  assert.equal(s.cellIndex("r2c5"), 13);
  assert.equal(s.cellIndex("r0c5"), -1);
  assert.equal(s.cellIndex("r2c5 "), -1);
  for (const i of s.CELLS) assert.equal(s.cellIndex(s.cellName(i)), i);
});

test("houses name their nine cells, anything else none", () => {
  assert.deepEqual(s.houseCells("row 2"), [9, 10, 11, 12, 13, 14, 15, 16, 17]);
  assert.deepEqual(s.houseCells("column 9"), [8, 17, 26, 35, 44, 53, 62, 71, 80]);
  assert.deepEqual(s.houseCells("box 5"), [30, 31, 32, 39, 40, 41, 48, 49, 50]);
  assert.deepEqual(s.houseCells("box 0"), []);
  assert.deepEqual(s.houseCells("diagonal 1"), []);
});

test("every cell has 20 distinct peers, never itself", () => {
  for (const i of s.CELLS) {
    assert.equal(new Set(s.PEERS[i]).size, 20);
    assert.ok(!s.PEERS[i].includes(i));
  }
  assert.ok(s.PEERS[0].includes(20)); // same box
  assert.ok(!s.PEERS[0].includes(30));
});

test("parseGrid reads digits and treats '.' and '0' as empty", () => {
  assert.deepEqual(s.parseGrid("1.0" + "9".repeat(3)), [1, 0, 0, 9, 9, 9]);
  assert.equal(s.parseGrid(PUZZLE).filter(Boolean).length, 30);
});

test("conflicts finds the cells whose digit repeats in a house", () => {
  const values = s.parseGrid(PUZZLE);
  assert.equal(s.conflicts(values).size, 0);
  values[2] = 5; // row 1 already has a 5 in r1c1
  assert.deepEqual([...s.conflicts(values)].sort((a, b) => a - b), [0, 2]);
});

test("candidates are the digits no peer holds", () => {
  const values = s.parseGrid(PUZZLE);
  assert.deepEqual(s.digitsOf(s.candidateMask(values, 2)), [1, 2, 4]); // r1c3
  assert.equal(s.candidateMask(s.parseGrid(".".repeat(81)), 0), 0b1111111110);
  const marks = s.candidateMarks(values);
  assert.equal(marks[0], 0); // a given has no marks
  assert.equal(marks[2], s.candidateMask(values, 2));
  assert.deepEqual(s.digitsOf(0), []);
  assert.deepEqual(s.digitsOf((1 << 1) | (1 << 9)), [1, 9]);
});

test("placeDigit fills a cell and strikes the digit from its peers' marks only", () => {
  const values = s.parseGrid(PUZZLE);
  const marks = s.candidateMarks(values);
  const before = [...marks];
  s.placeDigit(values, marks, 2, 4);
  assert.equal(values[2], 4);
  for (const j of s.PEERS[2]) assert.equal(marks[j] & (1 << 4), 0);
  assert.equal(marks[80], before[80]); // not a peer
});

test("isSolved needs a full grid without a repeat", () => {
  assert.ok(s.isSolved(digits(SOLUTION)));
  assert.ok(!s.isSolved(s.parseGrid(PUZZLE)));
  const swapped = digits(SOLUTION);
  [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
  assert.ok(!s.isSolved(swapped));
});

test("solutionFromPath follows the placements, or gives null", () => {
  assert.deepEqual(s.solutionFromPath(PUZZLE, singlesPath()), digits(SOLUTION));
  assert.equal(s.solutionFromPath(PUZZLE, singlesPath().slice(1)), null);
  assert.equal(s.solutionFromPath(PUZZLE, null), null);
});

test("nextHint points at mistakes first", () => {
  const values = s.parseGrid(PUZZLE);
  values[2] = 1; // r1c3 is 4
  const hint = s.nextHint(PUZZLE, values, Array(81).fill(0), singlesPath(), null);
  assert.deepEqual(hint, { kind: "mistake", cells: [2] });
  // Without a path, the fetched solution still finds it.
  assert.deepEqual(s.nextHint(PUZZLE, values, Array(81).fill(0), null, digits(SOLUTION)), hint);
});

test("nextHint gives the first placement not yet made, then done", () => {
  const path = singlesPath();
  const values = s.parseGrid(PUZZLE);
  assert.deepEqual(s.nextHint(PUZZLE, values, Array(81).fill(0), path, null), { kind: "step", index: 0, step: path[0] });
  values[2] = 4; // the first step, made by the player
  assert.equal(s.nextHint(PUZZLE, values, Array(81).fill(0), path, null).index, 1);
  assert.deepEqual(s.nextHint(PUZZLE, digits(SOLUTION), Array(81).fill(0), path, null), { kind: "done" });
  assert.deepEqual(s.nextHint(PUZZLE, s.parseGrid(PUZZLE), Array(81).fill(0), undefined, null), { kind: "none" });
});

test("nextHint skips a removal that no longer matters or was already shown", () => {
  const removal = { technique: "Pointing pair", eliminations: [{ cell: "r1c3", digit: 2 }] };
  const path = [removal, ...singlesPath()];
  const values = s.parseGrid(PUZZLE);
  const none = Array(81).fill(0);
  assert.deepEqual(s.nextHint(PUZZLE, values, none, path, null), { kind: "step", index: 0, step: removal });
  assert.equal(s.nextHint(PUZZLE, values, none, path, null, new Set([0])).index, 1);
  const struck = [...none];
  struck[2] = (1 << 1) | (1 << 4); // the player's marks on r1c3 no longer hold 2
  assert.equal(s.nextHint(PUZZLE, values, struck, path, null).index, 1);
});

test("applyStep places digits and writes marks without the removed candidate", () => {
  const values = s.parseGrid(PUZZLE);
  const marks = Array(81).fill(0);
  s.applyStep(values, marks, singlesPath()[0]);
  assert.equal(values[2], 4);
  s.applyStep(values, marks, { eliminations: [{ cell: "r1c4", digit: 6 }] });
  assert.deepEqual(s.digitsOf(marks[3]), s.digitsOf(s.candidateMask(values, 3)).filter((d) => d !== 6));
  s.applyStep(values, marks, { eliminations: [{ cell: "r1c1", digit: 5 }] }); // a given: untouched
  assert.equal(marks[0], 0);
});

test("stepCells sorts a step's cells by role", () => {
  const cells = s.stepCells({
    houses: ["row 1"],
    cells: ["r1c1", { cell: "r1c2" }],
    placements: [{ cell: "r1c3", digit: 4 }],
    eliminations: [{ cell: "r1c4", digit: 6 }, { cell: "nowhere", digit: 1 }],
  });
  assert.deepEqual([...cells.houses], [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual([...cells.cells], [0, 1]);
  assert.deepEqual([...cells.placements], [2]);
  assert.deepEqual([...cells.eliminations], [3]);
});
