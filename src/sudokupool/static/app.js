// The page that plays the pool: it keeps the game's state and wires the buttons, keys and panels to it.
// Plain ES modules, no build step: board.js draws the grid and the pad; sudoku.js (grid and hints),
// game.js (the moves and undo), api.js (the unversioned API), store.js (saved games and the clock),
// keys.js (key presses to actions) and labels.js (what the page says) leave the DOM alone.
// The grid lives in `state`; every change goes through `commit`, which saves, re-renders and checks for
// a solved grid. The board derives every class and label from `state`, so the DOM never holds game state.

// Load the modules with this file's own ?v= so they are cached (and replaced) together with it. A static
// `import` cannot carry the version, and an unversioned URL would be revalidated on every visit.
const version = new URL(import.meta.url).search;
const [sudoku, game, boardModule, api, store, keys, labels] = await Promise.all(
  ["sudoku", "game", "board", "api", "store", "keys", "labels"].map((name) => import(`./${name}.js${version}`)),
);
const { cellName, isSolved, nextHint, parseGrid, solutionFromPath } = sudoku;
const { Board } = boardModule;
const { fetchPuzzle, fetchSolution, fetchStats, imageUrl } = api;
const { Timer, formatTime, loadGame, saveGame } = store;
const { detailRows, requestedId, capitalise } = labels;

const $ = (id) => document.getElementById(id);
// Saved games live in localStorage; where it is disabled (reading it throws), nothing is kept.
const storage = (() => {
  try {
    return localStorage;
  } catch {
    return null;
  }
})();

const state = {
  record: null,
  givens: [],
  values: [],
  marks: [], // per cell a bit mask of pencilled digits (bit d for digit d)
  selected: -1,
  pencil: false,
  solution: null,
  wrong: new Set(),
  revealed: new Set(),
  revealedAll: false,
  solved: false,
  timer: new Timer(),
  undo: [],
  hint: null,
  hintSeen: new Set(), // removal-only steps already shown
  lastRequest: null,
};

// ---- the board -------------------------------------------------------------------------------------

function select(i, focus = true) {
  state.selected = i;
  board.tabTo(i, focus);
  render();
}

function render() {
  if (state.record) board.render(state);
}

// ---- playing ---------------------------------------------------------------------------------------

/** Every change ends here: it forgets stale marks of wrong cells, saves, renders and checks for a win. */
function commit({ valuesChanged }) {
  if (valuesChanged) {
    state.wrong = new Set(game.wrongCells(state.values, state.solution, [...state.wrong]));
    hideHint();
  }
  if (!state.solved && isSolved(state.values)) finish();
  save();
  render();
}

function input(digit, forcePencil) {
  const i = state.selected;
  if (!state.record || state.solved) return;
  if (i < 0) return say("Select a cell first (click it, or move there with the arrow keys).");
  if (state.givens[i]) return say(`${cellName(i)} is a given: it cannot change.`);
  if (forcePencil || state.pencil) {
    if (game.toggleMark(state, i, digit)) commit({ valuesChanged: false });
    return;
  }
  game.enterDigit(state, i, digit);
  commit({ valuesChanged: true });
}

function erase() {
  const i = state.selected;
  if (!state.record || state.solved || i < 0 || state.givens[i]) return;
  if (game.eraseCell(state, i)) commit({ valuesChanged: true });
}

function undo() {
  if (game.undo(state)) commit({ valuesChanged: true });
}

function move(dr, dc) {
  select(game.moveFrom(state.selected, dr, dc));
}

function togglePencil() {
  state.pencil = !state.pencil;
  say(state.pencil ? "Pencil marks on: digits toggle small marks." : "Pencil marks off: digits fill cells.");
  render();
}

function autoMarks() {
  if (!state.record || state.solved) return;
  game.fillMarks(state);
  say("Every empty cell now shows its candidates.");
  commit({ valuesChanged: false });
}

// ---- timer -----------------------------------------------------------------------------------------

function startTimer() {
  if (!state.solved && !document.hidden) state.timer.start();
}

function stopTimer() {
  state.timer.stop();
}

function tick() {
  $("timer").textContent = formatTime(state.timer.read());
}

// ---- the solution: check, reveal, win ----------------------------------------------------------------

async function needSolution({ quiet = false } = {}) {
  if (state.solution) return state.solution;
  const record = state.record;
  try {
    const solution = parseGrid(await fetchSolution(record.canonical_id));
    if (state.record === record) state.solution = solution;
  } catch (error) {
    // The solve path spells out the same solution, so a server gone mid-game does not stop the game.
    const fromPath = solutionFromPath(record.puzzle, record.solve_path);
    if (!fromPath) {
      if (quiet) return null;
      showError(`Could not fetch the solution: ${error.message}`, { label: "Try again", run: hideError });
      return null;
    }
    if (state.record === record) state.solution = fromPath;
  }
  return state.record === record ? state.solution : null;
}

async function check() {
  if (!state.record) return;
  const solution = await needSolution();
  if (!solution) return;
  state.wrong = new Set(game.wrongCells(state.values, solution));
  const left = state.values.filter((v) => !v).length;
  if (state.wrong.size) {
    const n = state.wrong.size;
    say(`${n} ${n === 1 ? "entry does" : "entries do"} not match the solution (marked in red).`);
  } else if (left) say(`Everything so far is correct; ${left} ${left === 1 ? "cell" : "cells"} to go.`);
  else say("Everything is correct.");
  render();
}

async function revealCell() {
  const i = state.selected;
  if (!state.record || state.solved) return;
  if (i < 0 || state.givens[i]) return say("Select an empty or entered cell to reveal.");
  const solution = await needSolution();
  if (!solution) return;
  game.revealCell(state, i, solution);
  say(`${cellName(i)} is ${solution[i]}.`);
  commit({ valuesChanged: true });
}

let confirmTimer = null;

/** Destructive buttons ask for a second click within a few seconds instead of a blocking dialog. */
function confirmFirst(button, question, action) {
  if (button.dataset.confirming === "yes") {
    clearTimeout(confirmTimer);
    button.dataset.confirming = "";
    button.textContent = button.dataset.label;
    return action();
  }
  button.dataset.label ??= button.textContent;
  button.dataset.confirming = "yes";
  button.textContent = question;
  confirmTimer = setTimeout(() => {
    button.dataset.confirming = "";
    button.textContent = button.dataset.label;
  }, 4000);
}

async function revealAll() {
  if (!state.record || state.solved) return;
  const solution = await needSolution();
  if (!solution) return;
  game.revealAll(state, solution);
  state.revealedAll = true;
  commit({ valuesChanged: true });
}

function restart() {
  if (!state.record) return;
  begin(state.record, null);
  say("Started again.");
}

function finish() {
  state.solved = true;
  stopTimer();
  tick();
  state.selected = -1;
  const banner = $("success");
  if (state.revealedAll) banner.textContent = "The solution is revealed. Try another puzzle!";
  else {
    const helped = state.revealed.size ? ` (with ${state.revealed.size} revealed)` : "";
    banner.textContent = `Solved in ${formatTime(state.timer.read())}${helped}. Well done!`;
  }
  banner.hidden = false;
}

// ---- hints -----------------------------------------------------------------------------------------

function showHint() {
  const record = state.record;
  if (!record || state.solved) return;
  const hint = nextHint(record.puzzle, state.values, state.marks, record.solve_path, state.solution, state.hintSeen);
  state.hint = hint;
  if (hint.kind === "step" && !hint.step.placements?.length) state.hintSeen.add(hint.index);
  const technique = $("hint-technique");
  const text = $("hint-text");
  const legend = $("hint-legend");
  $("hint-apply").hidden = hint.kind !== "step";
  legend.replaceChildren();
  if (hint.kind === "mistake") {
    state.wrong = new Set(hint.cells);
    technique.textContent = "Fix a mistake first";
    const names = hint.cells.map(cellName).join(", ");
    text.textContent = `${names} ${hint.cells.length === 1 ? "does" : "do"} not match the solution (marked in red). Erase before the next step.`;
  } else if (hint.kind === "step") {
    const { step, index } = hint;
    technique.textContent = `Step ${index + 1} of ${record.solve_path.length}: ${step.technique}`;
    text.textContent = step.explanation;
    legend.append(...legendItems(step));
  } else if (hint.kind === "done") {
    technique.textContent = "No step left";
    text.textContent = "Every step of the solve path is done: fill in what is left.";
  } else {
    technique.textContent = "No explained path";
    text.textContent = "This puzzle has no solve path, so there is no hint. Check or Reveal cell can still help.";
  }
  $("hint-panel").hidden = false;
  render();
  // On a phone the panel sits below the grid: bring the explanation into view.
  $("hint-panel").scrollIntoView({ block: "nearest" });
}

function legendItems(step) {
  const items = [];
  const add = (cls, label) => {
    const span = document.createElement("span");
    span.className = `key ${cls}`;
    span.textContent = label;
    items.push(span);
  };
  if (step.houses?.length) add("hint-house", step.houses.join(", "));
  const targets = new Set([...(step.placements ?? []), ...(step.eliminations ?? [])].map((x) => x.cell));
  if (step.cells?.some((c) => !targets.has(c))) add("hint-cell", "cells that explain it");
  if (step.placements?.length) add("hint-place", "to fill");
  if (step.eliminations?.length) add("hint-elim", "candidates to remove");
  return items;
}

function hideHint() {
  state.hint = null;
  $("hint-panel").hidden = true;
}

function applyHint() {
  const hint = state.hint;
  if (hint?.kind !== "step" || state.solved) return;
  game.followStep(state, hint.step);
  commit({ valuesChanged: true });
}

// ---- messages --------------------------------------------------------------------------------------

function say(text) {
  $("message").textContent = text;
}

let errorAction = null;

function showError(text, action) {
  $("error-text").textContent = text;
  errorAction = action;
  $("error-retry").textContent = action.label;
  $("error").hidden = false;
}

function hideError() {
  $("error").hidden = true;
}

// ---- loading a puzzle ------------------------------------------------------------------------------

async function load(request) {
  state.lastRequest = request;
  $("main").setAttribute("aria-busy", "true");
  document.body.classList.add("loading");
  try {
    const record = await fetchPuzzle(request);
    hideError();
    begin(record, loadGame(storage, record.canonical_id));
    const url = `/p/${record.canonical_id}`;
    if (location.pathname !== url || location.search) {
      history[request.push ? "pushState" : "replaceState"]({ id: record.canonical_id }, "", url);
    }
  } catch (error) {
    reportLoadError(error, request);
  } finally {
    $("main").setAttribute("aria-busy", "false");
    document.body.classList.remove("loading");
  }
}

function reportLoadError(error, request) {
  const kept = state.record ? " Your current game is still here." : "";
  if (error.status === 404 && request.id) {
    const action = { label: "Play a random puzzle", run: () => load({ push: true }) };
    showError(`No puzzle has the code “${request.id}”. Check the code, or play another puzzle.${kept}`, action);
  } else if (error.status === 404) {
    showError(`${capitalise(error.message)}.${kept}`, { label: "Play any puzzle", run: () => load({ push: true }) });
  } else {
    const text = error.status ? `The server could not give a puzzle (${error.message}).` : error.message;
    showError(`${text}${kept}`, { label: "Try again", run: () => load(request) });
  }
  document.body.classList.toggle("empty", !state.record);
}

function begin(record, saved) {
  state.record = record;
  state.givens = parseGrid(record.puzzle);
  state.values = saved?.values ?? [...state.givens];
  state.marks = saved?.marks ?? Array(81).fill(0);
  state.revealed = new Set(saved?.revealed ?? []);
  state.revealedAll = saved?.revealedAll ?? false;
  state.solved = false;
  state.timer.reset(saved?.elapsed ?? 0);
  state.wrong = new Set();
  state.undo = [];
  state.hintSeen = new Set();
  state.selected = -1;
  state.solution = null;
  hideHint();
  say("");
  $("success").hidden = true;
  document.body.classList.remove("empty");
  board.tabTo(state.givens.findIndex((v) => !v) >= 0 ? state.givens.findIndex((v) => !v) : 0);
  if (isSolved(state.values)) finish();
  else startTimer();
  tick();
  showDetails(record);
  showShare(record);
  save();
  render();
  // Fetched now so Check and Reveal still work if the server goes away mid-game.
  needSolution({ quiet: true });
}

function showDetails(record) {
  $("status-difficulty").textContent = record.difficulty ?? "?";
  $("status-difficulty").dataset.level = String(record.difficulty_level ?? "");
  $("status-code").textContent = record.canonical_id;
  const rows = detailRows(record, state.givens.filter(Boolean).length);
  const list = $("details");
  list.replaceChildren();
  for (const [term, value, label] of rows) {
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    dd.textContent = value;
    dd.dataset.field = term.toLowerCase().replaceAll(" ", "-");
    if (label) dd.setAttribute("aria-label", label);
    list.append(dt, dd);
  }
}

function showShare(record) {
  const id = record.canonical_id;
  $("share-code").textContent = id;
  $("share-link").value = `${location.origin}/p/${id}`;
  $("download-puzzle").href = imageUrl(id, "puzzle");
  $("download-puzzle").download = `sudoku-${id}.png`;
  $("download-solution").href = imageUrl(id, "solution");
  $("download-solution").download = `sudoku-${id}-solution.png`;
}

async function copyLink() {
  const field = $("share-link");
  const button = $("copy-link");
  let copied = false;
  try {
    await navigator.clipboard.writeText(field.value);
    copied = true;
  } catch {
    // The clipboard API needs a secure context; plain http on another host falls back to a selection.
    field.select();
    copied = document.execCommand?.("copy") ?? false;
  }
  say(copied ? "Link copied." : "Select the link and copy it.");
  button.textContent = copied ? "Copied ✓" : "Copy link";
  setTimeout(() => (button.textContent = "Copy link"), 2000);
}

// ---- saving progress (per puzzle, in this browser only) ----------------------------------------------

function save() {
  if (!state.record) return;
  const { values, marks, revealed, revealedAll } = state;
  saveGame(storage, state.record.canonical_id, { values, marks, revealed, revealedAll, elapsed: state.timer.read() });
}

// ---- wiring ----------------------------------------------------------------------------------------

function onKey(event) {
  const inField = Boolean(event.target.closest?.("input, textarea, select"));
  const inGrid = Boolean(event.target.closest?.(".grid"));
  const key = keys.keyAction(event, { selected: state.selected, inField, inGrid });
  if (!key) return;
  if (key.prevent) event.preventDefault();
  if (key.action === "undo") undo();
  else if (key.action === "erase") erase();
  else if (key.action === "input") input(key.digit, key.pencil);
  else if (key.action === "move") move(key.dr, key.dc);
  else if (key.action === "pencil") togglePencil();
  else if (key.action === "hint") showHint();
}

async function showStats() {
  try {
    const stats = await fetchStats();
    const parts = Object.entries(stats.by_difficulty ?? {}).map(([name, n]) => `${n.toLocaleString()} ${name}`);
    $("pool-stats").textContent = `The pool holds ${stats.total.toLocaleString()} puzzles${parts.length ? `: ${parts.join(" · ")}` : ""}.`;
    for (const button of document.querySelectorAll("[data-difficulty]")) {
      const name = button.dataset.difficulty;
      const key = Object.keys(stats.by_difficulty ?? {}).find((k) => k.toLowerCase() === name);
      if (name && !stats.by_difficulty?.[key]) button.disabled = true;
    }
  } catch {
    // The counts are a nicety; the game does not need them.
  }
}

function wire() {
  document.addEventListener("keydown", onKey);
  for (const button of document.querySelectorAll("[data-difficulty]")) {
    button.addEventListener("click", () => load({ difficulty: button.dataset.difficulty, push: true }));
  }
  $("pencil").addEventListener("click", togglePencil);
  $("erase").addEventListener("click", erase);
  $("undo").addEventListener("click", undo);
  $("hint").addEventListener("click", showHint);
  $("check").addEventListener("click", check);
  $("reveal-cell").addEventListener("click", revealCell);
  $("reveal-all").addEventListener("click", (e) => confirmFirst(e.currentTarget, "Sure? Reveal all", revealAll));
  $("restart").addEventListener("click", (e) => confirmFirst(e.currentTarget, "Sure? Restart", restart));
  $("automarks").addEventListener("click", autoMarks);
  $("hint-apply").addEventListener("click", applyHint);
  $("hint-close").addEventListener("click", () => {
    hideHint();
    render();
  });
  $("copy-link").addEventListener("click", copyLink);
  $("error-retry").addEventListener("click", () => errorAction?.run());
  $("error-close").addEventListener("click", hideError);
  $("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $("open-code").value.replace(/[\s-]+/g, "").toUpperCase();
    if (code) load({ id: code, push: true });
  });
  window.addEventListener("popstate", () => {
    const id = requestedId(location.pathname, location.search);
    if (id && id.toUpperCase() !== state.record?.canonical_id) load({ id });
  });
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) stopTimer();
    else startTimer();
  });
  window.addEventListener("pagehide", save);
  setInterval(tick, 500);
  // The timer survives a reload: save it now and then, not only on moves.
  setInterval(() => state.record && !state.solved && save(), 5000);
}

const board = new Board({ onSelect: (i) => select(i), onDigit: (d) => input(d, false) });
wire();
const first = requestedId(location.pathname, location.search);
load(first ? { id: first } : {});
showStats();
