/** Hand-written SVG charts (no dependencies): lines over numeric x, or grouped bars over categories. */
export interface Series {
  name: string;
  /** [x, y]; x is a number for line charts, a category label for bar charts. */
  points: [number | string, number][];
}

export interface Chart {
  /** File name stem under bench/charts/. */
  id: string;
  title: string;
  kind: "line" | "bar";
  x_label: string;
  y_label: string;
  log_y?: boolean;
  series: Series[];
}

const W = 640;
const H = 360;
const M = { l: 70, r: 150, t: 36, b: 48 };
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function fmt(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return `${+v.toPrecision(3)}`;
}

/** Returns a y → pixel mapping and tick values. */
function yScale(values: number[], log: boolean): { y: (v: number) => number; ticks: number[] } {
  const ph = H - M.t - M.b;
  if (log) {
    const pos = values.filter((v) => v > 0);
    const lo = Math.floor(Math.log10(Math.min(...pos, 1)));
    const hi = Math.ceil(Math.log10(Math.max(...pos, 10)));
    const ticks = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
    return { y: (v) => M.t + ph - ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo || 1)) * ph, ticks };
  }
  const max = Math.max(...values, 0) || 1;
  const step = 10 ** Math.floor(Math.log10(max / 4));
  const nice = [1, 2, 2.5, 5, 10].map((k) => k * step).find((s) => max / s <= 5)!;
  const top = Math.ceil(max / nice) * nice;
  const ticks = Array.from({ length: Math.round(top / nice) + 1 }, (_, i) => i * nice);
  return { y: (v) => M.t + ph - (v / top) * ph, ticks };
}

function frame(c: Chart, ticks: number[], y: (v: number) => number, body: string, xTicks: string): string {
  const pw = W - M.l - M.r;
  const grid = ticks
    .map(
      (t) =>
        `<line x1="${M.l}" x2="${M.l + pw}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/>` +
        `<text x="${M.l - 6}" y="${y(t) + 4}" text-anchor="end">${fmt(t)}</text>`,
    )
    .join("");
  const legend = c.series
    .map(
      (s, i) =>
        `<rect x="${W - M.r + 12}" y="${M.t + i * 18}" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/>` +
        `<text x="${W - M.r + 28}" y="${M.t + i * 18 + 9}">${esc(s.name)}</text>`,
    )
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(c.title)}</text>
${grid}${xTicks}
<line x1="${M.l}" x2="${M.l}" y1="${M.t}" y2="${H - M.b}" stroke="#333"/>
<line x1="${M.l}" x2="${M.l + pw}" y1="${H - M.b}" y2="${H - M.b}" stroke="#333"/>
<text x="${M.l + pw / 2}" y="${H - 10}" text-anchor="middle">${esc(c.x_label)}</text>
<text transform="translate(16 ${M.t + (H - M.t - M.b) / 2}) rotate(-90)" text-anchor="middle">${esc(c.y_label)}</text>
${body}${legend}
</svg>
`;
}

export function renderChart(c: Chart): string {
  const ys = c.series.flatMap((s) => s.points.map((p) => p[1]));
  const { y, ticks } = yScale(ys, c.log_y ?? false);
  const pw = W - M.l - M.r;
  if (c.kind === "bar") {
    const cats = [...new Set(c.series.flatMap((s) => s.points.map((p) => String(p[0]))))];
    const gw = pw / Math.max(cats.length, 1);
    const bw = (gw * 0.8) / Math.max(c.series.length, 1);
    const base = y(c.log_y ? 0 : 0);
    const bars = c.series
      .map((s, si) =>
        s.points
          .map((p) => {
            const x = M.l + cats.indexOf(String(p[0])) * gw + gw * 0.1 + si * bw;
            const top = y(p[1]);
            return `<rect x="${x}" y="${top}" width="${bw - 1}" height="${Math.max(0, (c.log_y ? H - M.b : base) - top)}" fill="${COLORS[si % COLORS.length]}"><title>${esc(s.name)} ${esc(String(p[0]))}: ${fmt(p[1])}</title></rect>`;
          })
          .join(""),
      )
      .join("");
    const xt = cats.map((k, i) => `<text x="${M.l + i * gw + gw / 2}" y="${H - M.b + 16}" text-anchor="middle">${esc(k)}</text>`).join("");
    return frame(c, ticks, y, bars, xt);
  }
  const xs = c.series.flatMap((s) => s.points.map((p) => Number(p[0])));
  const x0 = Math.min(...xs, 0);
  const x1 = Math.max(...xs, 1);
  const x = (v: number) => M.l + ((v - x0) / (x1 - x0 || 1)) * pw;
  const lines = c.series
    .map((s, si) => {
      const col = COLORS[si % COLORS.length];
      const pts = s.points.map((p) => `${x(Number(p[0])).toFixed(1)},${y(p[1]).toFixed(1)}`);
      const dots = s.points
        .map((p) => `<circle cx="${x(Number(p[0])).toFixed(1)}" cy="${y(p[1]).toFixed(1)}" r="3" fill="${col}"><title>${fmt(Number(p[0]))}: ${fmt(p[1])}</title></circle>`)
        .join("");
      return `<polyline fill="none" stroke="${col}" stroke-width="2" points="${pts.join(" ")}"/>${dots}`;
    })
    .join("");
  const xticks = [...new Set(xs)].sort((a, b) => a - b);
  const xt = xticks.map((v) => `<text x="${x(v)}" y="${H - M.b + 16}" text-anchor="middle">${fmt(v)}</text>`).join("");
  return frame(c, ticks, y, lines, xt);
}
