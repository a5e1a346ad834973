// Charts over time with uPlot (loaded by index.html as the global `uPlot`: its minified build
// is an IIFE). The chart follows its container's width, so it fits laptop and phone screens.
import { html } from "htm/preact"
import { useEffect, useRef } from "preact/hooks"

/**
 * @param {{ title: string, days: Array<string>, series: Array<{ label: string, values: Array<number>, color: string, scale: string, format: (n: number) => string }> }} props
 */
export const TimeChart = ({ title, days, series }) => {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null))
  useEffect(() => {
    const el = box.current
    /** @type {any} */
    const uPlot = /** @type {any} */ (globalThis).uPlot
    if (!el || !uPlot) return
    const xs = days.map((d) => Date.parse(`${d}T12:00:00Z`) / 1000)
    const [left, right] = series
    const options = {
      width: el.clientWidth,
      height: 220,
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      series: [
        { value: (/** @type {unknown} */ _u, /** @type {number} */ v) => (v == null ? "" : new Date(v * 1000).toISOString().slice(0, 10)) },
        ...series.map((s) => ({
          label: s.label,
          scale: s.scale,
          stroke: s.color,
          fill: `${s.color}22`,
          width: 2,
          points: { show: days.length < 40 },
          value: (/** @type {unknown} */ _u, /** @type {number} */ v) => (v == null ? "" : s.format(v))
        }))
      ],
      axes: [
        {},
        {
          scale: left?.scale,
          values: (/** @type {unknown} */ _u, /** @type {Array<number>} */ ticks) => ticks.map((t) => left?.format(t) ?? String(t)),
          size: 70
        },
        ...(right && right.scale !== left?.scale
          ? [{
            scale: right.scale,
            side: 1,
            grid: { show: false },
            values: (/** @type {unknown} */ _u, /** @type {Array<number>} */ ticks) => ticks.map((t) => right.format(t)),
            size: 60
          }]
          : [])
      ]
    }
    const chart = new uPlot(options, [xs, ...series.map((s) => s.values)], el)
    const resize = new ResizeObserver(() => chart.setSize({ width: el.clientWidth, height: 220 }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [days.join(), series.map((s) => s.values.join()).join("|")])
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    <div ref=${box} role="img" aria-label=${`${title}: ${days.length} days`}></div>
  </figure>`
}
