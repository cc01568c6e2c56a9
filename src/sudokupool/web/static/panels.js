// The cards beside the board and the footer: the hint panel, the puzzle's details, the share card and the
// pool's counts. Each shows what it is given (texts from labels.js and hints.js); none holds game state.

const $ = (id) => document.getElementById(id);

/** Shows the hint panel with `view` (hints.js's `hintView`) and brings it into view. */
export function showHint(view) {
  $("hint-technique").textContent = view.technique;
  $("hint-text").textContent = view.text;
  $("hint-apply").hidden = !view.apply;
  $("hint-legend").replaceChildren(
    ...view.legend.map(([cls, label]) => {
      const span = document.createElement("span");
      span.className = `key ${cls}`;
      span.textContent = label;
      return span;
    }),
  );
  const panel = $("hint-panel");
  panel.hidden = false;
  // On a phone the panel sits below the grid: bring the explanation into view.
  panel.scrollIntoView({ block: "nearest" });
}

export function hideHint() {
  $("hint-panel").hidden = true;
}

/** The status bar's difficulty and code, and the details card's `rows` (labels.js's `detailRows`). */
export function showDetails(record, rows) {
  $("status-difficulty").textContent = record.difficulty ?? "?";
  $("status-difficulty").dataset.level = String(record.difficulty_level ?? "");
  $("status-code").textContent = record.pasted && !record.in_pool ? "not in the pool" : record.canonical_id;
  const list = $("details");
  list.replaceChildren();
  for (const [term, value, label] of rows) {
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    dd.dataset.field = term.toLowerCase().replaceAll(" ", "-");
    if (label) {
      // A value drawn in symbols (the stars) is read as its label instead.
      const shown = document.createElement("span");
      shown.setAttribute("aria-hidden", "true");
      shown.textContent = value;
      const read = document.createElement("span");
      read.className = "sr-only";
      read.textContent = label;
      dd.append(shown, read);
    } else {
      dd.textContent = value;
    }
    list.append(dt, dd);
  }
}

/** The share card of a pasted puzzle: its `code` when the pool holds it (else none), and `link`, its address on
 *  this page; the pictures, print sheet and embed, which show a code's puzzle in the pool's layout, are hidden. */
export function showPastedShare(code, link) {
  $("share-code").textContent = code ?? "none: not in the pool";
  $("share-link").value = link;
  for (const id of ["share-images", "share-embed-row"]) $(id).hidden = true;
}

/** The share card of puzzle `id`: its code, its link and its two pictures (`images.puzzle`, `images.solution`). */
export function showShare(id, images) {
  for (const part of ["share-images", "share-embed-row"]) $(part).hidden = false;
  $("share-code").textContent = id;
  $("share-link").value = `${location.origin}/p/${id}`;
  $("download-puzzle").href = images.puzzle;
  $("download-puzzle").download = `sudoku-${id}.png`;
  $("download-solution").href = images.solution;
  $("download-solution").download = `sudoku-${id}-solution.png`;
}

/** The share card's embed snippet (labels.js's `embedSnippet`), SVG download and print sheet of puzzle `id`. */
export function showEmbed(id, { snippet, svg, print }) {
  $("share-embed").value = snippet;
  $("download-svg").href = svg;
  $("download-svg").download = `sudoku-${id}.svg`;
  $("print-sheet").href = print;
}

/** Copies the embed snippet; true if it reached the clipboard. */
export const copyEmbed = () => copyField("share-embed", "copy-embed", "Copy embed");

/** Copies the share link; true if it reached the clipboard. The button says so for two seconds. */
export const copyLink = () => copyField("share-link", "copy-link", "Copy link");

async function copyField(fieldId, buttonId, label) {
  const field = $(fieldId);
  const button = $(buttonId);
  let copied = false;
  try {
    await navigator.clipboard.writeText(field.value);
    copied = true;
  } catch {
    // The clipboard API needs a secure context; plain http on another host falls back to a selection.
    field.select();
    copied = document.execCommand?.("copy") ?? false;
  }
  button.textContent = copied ? "Copied" : label;
  if (copied) button.insertAdjacentHTML("beforeend", ' <span aria-hidden="true">✓</span>');
  setTimeout(() => (button.textContent = label), 2000);
  return copied;
}

/** The footer's `line` about the pool; the New puzzle buttons of difficulties without puzzles are disabled. */
export function showStats(line, hasPuzzles) {
  $("pool-stats").textContent = line;
  for (const button of document.querySelectorAll("[data-difficulty]")) {
    if (!hasPuzzles(button.dataset.difficulty)) button.disabled = true;
  }
}

/** Fill the technique picker with `options` (`{ value, text }`) after its placeholder. */
export function showTechniques(options) {
  const select = $("technique");
  for (const { value, text } of options) select.add(new Option(text, value));
}
