// kiln/kiln.h - everything a Kiln user includes.
#pragma once

#include <kiln/attention.h>
#include <kiln/autograd.h>
#include <kiln/dtype.h>
#include <kiln/interop.h>
#include <kiln/join.h>
#include <kiln/matmul.h>
#include <kiln/ops.h>
#include <kiln/stats.h>
#include <kiln/tensor.h>
#include <kiln/timing.h>
