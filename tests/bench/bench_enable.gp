# gnuplot -e "data='FILE'; growth='FILE2'; out='CHART.svg'; goal=SECONDS" bench_enable.gp: bench-enable's
# figures. Left: each lume-metal figure beside the one it is held to (FILE: label, lume-metal
# seconds, reference), each bar with its figure. Right: how the fleet's cost grows with its size
# (FILE2: VMs, lume-metal's CPU per VM in ms, its time beyond the simulator's floor in s), the
# 16-VM goal as a line. Legible (issue 50; tests/render checks the drawn picture): labels short
# enough for their column, room above the tallest bar for its figure (set offsets: gnuplot 5.4
# "help set offsets", autoscaled ranges only), the keys above the plots, never over a bar or line.
set terminal svg size 1100,480 dynamic font "sans,12" background "#ffffff"
set output out
set multiplot title "lume-metal on the simulator (one run of bench-enable)"

set size 0.6,0.94
set origin 0,0
set title "against what each is held to (seconds)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "seconds"
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xtics font ",11"
set bmargin 4
set key outside top center horizontal
set grid ytics
# Clustered histogram, 2 columns, gap 1: the boxes stand at column ± 1/6.
plot data using 2:xtic(1) title "lume-metal" lc rgb "#3465a4", \
     "" using 3 title "held to (manual recipe, ssh true, the floor)" lc rgb "#babdb6", \
     "" using ($0 - 1.0/6):2:(sprintf("%.2f", $2)) with labels offset 0,0.6 font ",10" notitle, \
     "" using ($0 + 1.0/6):3:(sprintf("%.2f", $3)) with labels offset 0,0.6 font ",10" notitle

set size 0.4,0.94
set origin 0.6,0
set title "how cost grows with the fleet (flat is the goal)"
unset style
unset offsets
set bmargin 4
set style data linespoints
set logscale x 2
set xlabel "VMs (--jobs = VMs)"
set xtics (1, 4, 16, 64) font ",12"
set xrange [0.8:80]
set ylabel "CPU per VM (ms)"
set y2label "beyond the floor (s)"
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
set key outside top center vertical
plot growth using 1:2 axes x1y1 title "lume-metal CPU per VM (ms)" lw 2 pt 7 lc rgb "#3465a4", \
     growth using 1:3 axes x1y2 title "lume-metal time beyond the floor (s)" lw 2 pt 5 lc rgb "#cc0000", \
     goal axes x1y2 title "goal at 16 VMs: 0.15 x one VM's enable" dt 2 lc rgb "#cc0000"
unset multiplot
