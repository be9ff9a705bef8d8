// examples/train: an MLP trained with autograd and a compiled Adam step;
// the loss curve matches the all-eager run in the same process, the loss
// falls, and plot_loss.py draws the curves as a PNG.
// RUN: %kiln_cxx -c %S/../../examples/train/train_mlp.cpp -o %t.o
// RUN: %kiln_cxx_eager %t.o %kiln_link -o %t
// RUN: %t --steps 150 --csv %t.csv | FileCheck %s
// RUN: python3 %S/../../examples/train/plot_loss.py %t.csv %t.png | FileCheck %s --check-prefix=PLOT
// RUN: python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); print(d[:8] == b'\x89PNG\r\n\x1a\n', len(d) > 1000)" %t.png | FileCheck %s --check-prefix=PNG
// CHECK: MLP 16-64-4, Adam lr 1e-2, 150 full-batch steps on cpu
// CHECK: step    loss eager  loss compiled
// CHECK: accuracy after training: eager {{0\.9[0-9]+|1\.000}}, compiled {{0\.9[0-9]+|1\.000}}
// CHECK: largest relative loss difference {{.*}}: ok
// PLOT: 150 steps
// PNG: True True
