# gnuplot -e "data='FILE'; out='CHART.svg'" bench_enable.gp: bench-enable's figures as bars, each
# lume-metal figure beside the one it is held to (FILE: label, lume-metal seconds, reference).
set terminal svg size 720,360 dynamic font "sans,12" background "#ffffff"
set output out
set title "lume-metal on the simulator (seconds; one run of bench-enable)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "seconds"
set yrange [0:*]
set key top left
set grid ytics
plot data using 2:xtic(1) title "lume-metal" lc rgb "#3465a4", \
     "" using 3 title "held to (manual recipe / ssh true / one VM)" lc rgb "#babdb6"
