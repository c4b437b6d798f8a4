"""The app: a Python config, so tasks can be computed."""

from vx import define_project

CHECKS = ["core:greet", "utils:format", "app:main"]

config = define_project(
    tags=["scope:app"],
    tasks={
        "build": {
            "description": "link the app from its libraries",
            "dependsOn": ["^build"],
            "exec": "mkdir -p dist && cat ../utils/dist/utils.txt src/*.txt > dist/app.txt"
            " && echo built app",
            "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
        },
        "test": {
            "description": "one grep per expected module",
            "dependsOn": ["build"],
            "exec": " && ".join(f"grep -q '{c}' dist/app.txt" for c in CHECKS)
            + f" && echo 'app: {len(CHECKS)} checks passed'",
            "cache": {"inputs": {"files": ["src/**", "dist/**"]}},
        },
        "lint": {
            "description": "no tabs in the sources",
            "exec": "! grep -rn \"$(printf '\\t')\" src && echo 'lint clean'",
        },
        "ci": {"description": "everything CI checks", "dependsOn": ["lint", "test"]},
    },
)
