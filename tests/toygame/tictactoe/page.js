// Tic-tac-toe with a curse on the page: the 3x3 board from the view this page was sent.
(function () {
  "use strict";
  const B = window.Battlement;
  const { add, stat } = B;

  function board(v, box) {
    stat(box, "phase", v.phase === "curse" ? "hiding the curses" : "play");
    if (v.phase === "play") stat(box, "to play", v.turn.toUpperCase());
    if (v.my_curse) stat(box, "your curse", v.my_curse);
  }

  function table(v, box) {
    const g = add(box, "div", undefined, "grid"); g.id = "ttt";
    ["a", "b", "c"].forEach((r) => {
      const row = add(g, "div", undefined, "grid-row");
      [1, 2, 3].forEach((n) => {
        const c = r + n, who = (v.cells || {})[c];
        const cell = add(row, "span", c + (who ? " " + who : ""), "tower " + (who || "free"));
        cell.dataset.cell = c; cell.dataset.piece = who || "";
      });
    });
  }

  B.register("tic-tac-toe", {
    board: board, table: table, sensorWords: { cell: "piece on" },
    label: (inp) => (inp.t === "curse" ? "curse " + inp.cell : inp.t === "cell" ? "piece on " + inp.cell : ""),
    ask: (v, a) => (v.phase === "curse" ? "hide your curse on your own page." : "put a piece on a free cell."),
  });
})();
