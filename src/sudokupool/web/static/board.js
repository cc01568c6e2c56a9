// The board: the 81 cells and the digit pad, built once, then redrawn from the game state after every change.
// Every class and label derives from the state passed to `render`, so the DOM never holds game state.

// Load the modules with this file's own ?v= so the page's modules are cached (and replaced) together.
const version = new URL(import.meta.url).search;
const [sudoku, labels] = await Promise.all([import(`./sudoku.js${version}`), import(`./labels.js${version}`)]);
const { CELLS, PEERS, cellIndex, cellName, conflicts, stepCells } = sudoku;
const { cellLabel } = labels;

const $ = (id) => document.getElementById(id);

export class Board {
  /** Builds the cells in #grid and the pad's digit buttons; a click on them calls `onSelect(i)` or `onDigit(d)`. */
  constructor({ onSelect, onDigit }) {
    this.cells = [];
    const grid = $("grid");
    for (let r = 0; r < 9; r++) {
      const row = document.createElement("div");
      row.className = "row";
      row.setAttribute("role", "row");
      for (let c = 0; c < 9; c++) {
        const i = r * 9 + c;
        const el = document.createElement("div");
        el.className = "cell";
        el.setAttribute("role", "gridcell");
        el.tabIndex = i === 0 ? 0 : -1;
        el.dataset.cell = cellName(i);
        el.dataset.index = String(i);
        // The cell's name is its text for screen readers; what it shows is hidden from them.
        const name = document.createElement("span");
        name.className = "sr-only";
        const shown = document.createElement("span");
        shown.className = "shown";
        shown.setAttribute("aria-hidden", "true");
        el.append(name, shown);
        row.append(el);
        this.cells.push(el);
      }
      grid.append(row);
    }
    grid.addEventListener("click", (event) => {
      const el = event.target.closest(".cell");
      if (el) onSelect(Number(el.dataset.index));
    });
    const digits = document.querySelector(".pad .digits");
    for (let d = 1; d <= 9; d++) {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.digit = String(d);
      button.textContent = String(d);
      button.setAttribute("aria-label", `Digit ${d}`);
      button.addEventListener("click", () => onDigit(d));
      digits.append(button);
    }
  }

  /** Makes cell i the one that Tab reaches, and focuses it when asked. */
  tabTo(i, focus = false) {
    for (const el of this.cells) el.tabIndex = -1;
    this.cells[i].tabIndex = 0;
    if (focus) this.cells[i].focus();
  }

  /** The cell that Tab reaches. */
  tabbable() {
    return Math.max(0, this.cells.findIndex((el) => el.tabIndex === 0));
  }

  /** Redraws the cells, the tools and the pad from the game state. */
  render(state) {
    const { values, marks, selected } = state;
    const clash = conflicts(values);
    const peers = new Set(selected >= 0 ? PEERS[selected] : []);
    const selectedValue = selected >= 0 ? values[selected] : 0;
    const step = state.hint?.kind === "step" ? stepCells(state.hint.step) : null;
    const elimBits = new Map();
    if (step) {
      for (const { cell, digit } of state.hint.step.eliminations ?? []) {
        const i = cellIndex(cell);
        elimBits.set(i, (elimBits.get(i) ?? 0) | (1 << digit));
      }
    }
    for (const i of CELLS) {
      const el = this.cells[i];
      const v = values[i];
      const isGiven = state.givens[i] > 0;
      const classes = ["cell"];
      const notes = [];
      if (isGiven) classes.push("given");
      else if (state.revealed.has(i)) classes.push("revealed");
      else if (v) classes.push("entered");
      if (i === selected) classes.push("selected");
      else if (peers.has(i)) classes.push("peer");
      if (selectedValue && v === selectedValue && i !== selected) classes.push("same");
      const flag = (cls, note) => {
        classes.push(cls);
        if (note) notes.push(note);
      };
      if (clash.has(i)) flag("conflict", "conflict");
      if (state.wrong.has(i)) flag("wrong", "wrong");
      if (step?.houses.has(i)) flag("hint-house", "in a house the hint names");
      if (step?.cells.has(i)) flag("hint-cell", "named by the hint");
      if (step?.placements.has(i)) flag("hint-place", "the hint fills this cell");
      if (step?.eliminations.has(i)) flag("hint-elim", "the hint removes a candidate here");
      el.className = classes.join(" ");
      const shownMarks = v ? 0 : marks[i];
      const struck = v ? 0 : (elimBits.get(i) ?? 0);
      const key = `${v}|${shownMarks}|${struck}`;
      const [name, shown] = el.children;
      if (el.dataset.key !== key) {
        el.dataset.key = key;
        shown.replaceChildren(v ? valueNode(v) : marksNode(shownMarks, struck));
      }
      const label = cellLabel(i, v, isGiven, shownMarks, notes);
      if (name.textContent !== label) name.textContent = label;
      el.setAttribute("aria-selected", String(i === selected));
      el.setAttribute("aria-readonly", String(isGiven));
      if (clash.has(i) || state.wrong.has(i)) el.setAttribute("aria-invalid", "true");
      else el.removeAttribute("aria-invalid");
    }
    $("grid").classList.toggle("solved", state.solved);
    $("grid").classList.toggle("pencil-mode", state.pencil);
    $("pencil").setAttribute("aria-pressed", String(state.pencil));
    $("undo").disabled = state.undo.length === 0 || state.solved;
    // The embedded player (embed.html) has only some of these buttons.
    for (const id of ["pencil", "erase", "hint", "check", "reveal-cell", "reveal-all", "automarks"]) {
      const button = $(id);
      if (button) button.disabled = state.solved;
    }
    for (const button of document.querySelectorAll(".pad .digits button")) {
      const d = Number(button.dataset.digit);
      const complete = values.filter((v) => v === d).length >= 9;
      button.classList.toggle("complete", complete);
      button.setAttribute("aria-label", complete ? `Digit ${d}, all nine placed` : `Digit ${d}`);
      button.disabled = state.solved;
    }
  }
}

function valueNode(v) {
  const span = document.createElement("span");
  span.className = "value";
  span.textContent = String(v);
  return span;
}

function marksNode(mask, struck) {
  const box = document.createElement("span");
  box.className = "marks";
  for (let d = 1; d <= 9; d++) {
    const span = document.createElement("span");
    const bit = 1 << d;
    if (struck & bit) span.className = "x";
    span.textContent = (mask | struck) & bit ? String(d) : "";
    box.append(span);
  }
  return box;
}
