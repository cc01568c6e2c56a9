// What the hint panel says about a hint from sudoku.js's `nextHint` (or the API's, for a pasted puzzle): its
// title, its text, its legend and whether the step can be applied. Pure: panels.js's `showHint` puts it on the page.

// Load the grid logic with this file's own ?v= so the page's modules are cached (and replaced) together.
const { cellIndex, cellName } = await import(`./sudoku.js${new URL(import.meta.url).search}`);

/** The API's Hint object (`/grids/{grid}/hint`) as a hint of `nextHint`'s shape: the wrong and conflicting
 *  entries as mistakes, the next step (without a place in a path: the API finds it from the board), or done. */
export function apiHint(answer) {
  if (answer.status === "fix") {
    const cells = new Set([...(answer.wrong ?? []), ...(answer.conflicting ?? [])].map(cellIndex));
    return { kind: "mistake", cells: [...cells].filter((i) => i >= 0).sort((a, b) => a - b) };
  }
  if (answer.status === "step") return { kind: "step", step: answer.step };
  return { kind: "done" };
}

/** The panel for a hint the server could not give, `text` saying why (labels.js's `engineFailure`). */
export function hintFailureView(text) {
  return { technique: "No hint just now", text, apply: false, legend: [] };
}

/** The panel for `hint`, in a puzzle whose solve path has `steps` steps:
 *  `{ technique, text, apply, legend }`, the legend as [class, label] pairs. */
export function hintView(hint, steps) {
  if (hint.kind === "mistake") {
    const names = hint.cells.map(cellName).join(", ");
    const verb = hint.cells.length === 1 ? "does" : "do";
    return {
      technique: "Fix a mistake first",
      text: `${names} ${verb} not match the solution (marked in red). Erase before the next step.`,
      apply: false,
      legend: [],
    };
  }
  if (hint.kind === "step") {
    const { step, index } = hint;
    return {
      technique: index === undefined ? `Next step: ${step.technique}` : `Step ${index + 1} of ${steps}: ${step.technique}`,
      text: step.explanation,
      apply: true,
      legend: legend(step),
    };
  }
  if (hint.kind === "done") {
    return {
      technique: "No step left",
      text: "Every step of the solve path is done: fill in what is left.",
      apply: false,
      legend: [],
    };
  }
  return {
    technique: "No explained path",
    text: "This puzzle has no solve path, so there is no hint. Check or Reveal cell can still help.",
    apply: false,
    legend: [],
  };
}

/** What a screen reader hears when the panel appears: its title, then its text. */
export const hintNews = (view) => `Hint: ${view.technique}. ${view.text}`;

/** The keys to the colours the board gives a step, as [class, label] pairs, for the parts the step has. */
export function legend(step) {
  const keys = [];
  if (step.houses?.length) keys.push(["hint-house", step.houses.join(", ")]);
  const targets = new Set([...(step.placements ?? []), ...(step.eliminations ?? [])].map((x) => x.cell));
  if (step.cells?.some((c) => !targets.has(c))) keys.push(["hint-cell", "cells that explain it"]);
  if (step.placements?.length) keys.push(["hint-place", "to fill"]);
  if (step.eliminations?.length) keys.push(["hint-elim", "candidates to remove"]);
  return keys;
}
