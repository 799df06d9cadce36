# The shardscaler demo's run: gnuplot this file to redraw it.
set terminal pngcairo size 1600,820 enhanced font "DejaVu Sans,13"
set output "/work/main/./shardscaler-demo.png"
set title "shardscaler demo: ShardSet monitoring/main, its shards and its ingestion" font ",15"
set xlabel "time since the demo started (s)"
set ylabel "shards"
set y2label "samples/s of the active shards together"
set datafile missing "NaN"
set border 11
set xtics nomirror
set ytics 1 nomirror
set y2tics nomirror
set format y2 "%.0f"
set grid xtics ytics lc rgb "#e4e4e4"
set key outside below center horizontal maxrows 2 width 2
set bmargin 8
set style textbox opaque noborder margins 1,1
set xrange [20:150]
set yrange [0:7]
set y2range [0:21474]
set arrow 1 from 27.8, graph 0 to 27.8, graph 1 nohead lw 1.5 dt 2 lc rgb "#1f4e9c" back
set label 1 "kubectl scale → 2" at 27.8, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#1f4e9c" boxed front
set arrow 2 from 29.7, graph 0 to 29.7, graph 1 nohead lw 1.5 dt 2 lc rgb "#1f4e9c" back
set label 2 "kubectl scale → 3" at 30.4, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#1f4e9c" boxed front
set arrow 3 from 86.1, graph 0 to 86.1, graph 1 nohead lw 1.5 dt 3 lc rgb "#6b6b6b" back
set label 3 "ingestion ×2" at 86.1, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#6b6b6b" boxed front
set arrow 4 from 99.0, graph 0 to 99.0, graph 1 nohead lw 1.5 dt 2 lc rgb "#c0392b" back
set label 4 "HPA → 4" at 99.0, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#c0392b" boxed front
set arrow 5 from 100.1, graph 0 to 100.1, graph 1 nohead lw 1.5 dt 3 lc rgb "#6b6b6b" back
set label 5 "ingestion falls" at 101.6, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#6b6b6b" boxed front
set arrow 6 from 134.3, graph 0 to 134.3, graph 1 nohead lw 1.5 dt 2 lc rgb "#c0392b" back
set label 6 "HPA → 3" at 134.3, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#c0392b" boxed front
set arrow 7 from 138.7, graph 0 to 138.7, graph 1 nohead lw 1.5 dt 2 lc rgb "#c0392b" back
set label 7 "HPA → 2" at 138.7, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#c0392b" boxed front
set arrow 8 from 142.9, graph 0 to 142.9, graph 1 nohead lw 1.5 dt 2 lc rgb "#c0392b" back
set label 8 "HPA → 1" at 142.9, graph 0.985 right rotate by 90 offset -0.9,0 font ",11" tc rgb "#c0392b" boxed front
plot "/work/main/./shardscaler-demo.dat" using 1:3 with steps lw 7 lc rgb "#2e8b57" title "active shards (status.shards)", \
  '' using 1:2 with steps lw 2.5 dt 2 lc rgb "#111111" title "desired shards (spec.shards)", \
  '' using 1:4 with steps lw 3 lc rgb "#e67e22" title "retained shards (detached, kept until their deadline)", \
  '' using 1:5 axes x1y2 with lines lw 2 lc rgb "#8e44ad" title "samples/s (right axis)", \
  keyentry with lines lw 1.5 dt 2 lc rgb "#c0392b" title "the HPA's decision (SuccessfulRescale)", \
  keyentry with lines lw 1.5 dt 2 lc rgb "#1f4e9c" title "kubectl scale", \
  keyentry with lines lw 1.5 dt 3 lc rgb "#6b6b6b" title "the demo changes the load"
