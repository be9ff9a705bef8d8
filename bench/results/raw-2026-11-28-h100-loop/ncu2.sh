#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/.bench
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,launch__registers_per_thread,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct
for b in 512 S; do for k in layer_norm_rows.*f32_loop rms_norm_rows.*bf16_loop; do
echo "=== $b $k"; timeout 200 ncu --metrics $M -k regex:$k -s 1210 -c 1 .bench/loopexp$b 2>&1 | grep -E "^\s+[a-z_]+__|^\s+launch" ; done; done
