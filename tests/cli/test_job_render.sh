#!/bin/sh
# End to end: `paictl job render` (offline).
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
EX=examples/jobs

run job render $EX/pytorch-mnist.yaml
expect_rc 0 "render"
expect_out "# job pytorch_mnist -> virtual cluster default, deployment prepare" "header"
expect_out "git clone --depth 1 https://github.com/pytorch/examples.git code && cd code" "preCommands first, rendered"
expect_out "python main.py --epochs 10 --batch-size 64 --lr 0.010 --data https://storage.example.com/datasets/mnist/" "commands rendered"
expect_out 'echo "training finished"' "postCommands last"

run job render $EX/pytorch-mnist.yaml --param epochs=20 --param "lr='1e-3'" --export-params
expect_rc 0 "render with overrides"
expect_out "--epochs 20" "--param number"
expect_out "--lr 1e-3" "a quoted --param stays text"
expect_out "export epochs=20" "export line"
expect_out "export lr=1e-3" "export line for a string"

run job render $EX/private-registry.yaml
expect_rc 0 "render a job with secrets"
expect_out "user ******, password ******" "registry credentials are masked"
expect_no_out "not-a-real-password" "no secret"
expect_no_out 'robot$ci' "no secret user name"

run job render -o json --task-role worker $EX/distributed-tensorflow.yaml
expect_rc 0 "render -o json"
expect_out '"name": "worker"' "the task role"
expect_no_out '"name": "ps"' "only the chosen task role"
expect_out '--train_steps 20000 --data_dir /mnt/data/cifar10' "script in json"
run job render -o yaml $EX/distributed-tensorflow.yaml
expect_rc 0 "render -o yaml"
expect_out "taskRoles:" "yaml output"

run job render $EX/pytorch-mnist.yaml --task-role nope
expect_rc 2 "unknown task role"
expect_err "task roles: train" "the task roles are listed"
run job render $EX/broken.yaml
expect_rc 2 "a job the server would refuse is not rendered"
expect_err "error[J021]" "the reason is shown"

finish
