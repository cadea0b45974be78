#!/usr/bin/env python3
# Ask-and-tell driver of a real Optuna study over JSON lines (stdin: one request per line; stdout: one
# answer per line), for the campaign bench: TPE sampler, Hyperband pruner. Debian's python3-optuna.
#
#   {"op": "init", "seed": 1, "space": {"renderer": [0, 1, ...], ...}, "enqueue": {...},
#    "min_resource": 15, "max_resource": 120, "reduction_factor": 3}   -> {"ok": true, "version": "3.1.0"}
#   {"op": "ask"}                                                       -> {"trial": 0, "params": {...}}
#   {"op": "report", "trial": 0, "step": 15, "value": 2.9}              -> {"prune": false}
#   {"op": "tell", "trial": 0, "state": "complete", "value": 2.5}        -> {"ok": true}
#                    (state "pruned" or "fail": value may be null)
#   {"op": "best"}                                                      -> {"trial": 3, "value": 2.4} or {"trial": null}
import json
import sys

try:
    import optuna
except ImportError:
    print(json.dumps({"error": "optuna: not installed (apt-get install python3-optuna)"}), flush=True)
    sys.exit(3)

optuna.logging.set_verbosity(optuna.logging.ERROR)
study = None
trials = {}


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    req = json.loads(line)
    op = req.get("op")
    try:
        if op == "init":
            sampler = optuna.samplers.TPESampler(seed=req["seed"])
            pruner = optuna.pruners.HyperbandPruner(
                min_resource=req["min_resource"],
                max_resource=req["max_resource"],
                reduction_factor=req["reduction_factor"],
            )
            study = optuna.create_study(direction="minimize", sampler=sampler, pruner=pruner)
            space = req["space"]
            if req.get("enqueue"):
                study.enqueue_trial(req["enqueue"])
            trials.clear()
            answer({"ok": True, "version": optuna.__version__})
        elif op == "ask":
            trial = study.ask()
            params = {name: trial.suggest_categorical(name, values) for name, values in space.items()}
            trials[trial.number] = trial
            answer({"trial": trial.number, "params": params})
        elif op == "report":
            trial = trials[req["trial"]]
            trial.report(req["value"], req["step"])
            answer({"prune": bool(trial.should_prune())})
        elif op == "tell":
            trial = trials.pop(req["trial"])
            state = {
                "complete": optuna.trial.TrialState.COMPLETE,
                "pruned": optuna.trial.TrialState.PRUNED,
                "fail": optuna.trial.TrialState.FAIL,
            }[req["state"]]
            value = req.get("value") if state == optuna.trial.TrialState.COMPLETE else None
            study.tell(trial, value, state=state)
            answer({"ok": True})
        elif op == "best":
            try:
                best = study.best_trial
                answer({"trial": best.number, "value": best.value})
            except ValueError:
                answer({"trial": None})
        else:
            answer({"error": f"unknown op {op}"})
    except Exception as e:  # the bench reports it: the figure is then absent, never a pass
        answer({"error": f"{type(e).__name__}: {e}"})
