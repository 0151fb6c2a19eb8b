"""Precision, recall, F1 and accuracy against values computed by hand, and None (never 0) when undefined."""

from eval_skills.stats.classification import (
    Confusion,
    accuracy,
    classification_metrics,
    confusion,
    f1,
    precision,
    recall,
)


def test_confusion_counts_each_pair():
    pairs = [(True, True), (True, True), (True, False), (False, True), (False, False), (False, False),
             (False, False)]
    assert confusion(pairs) == Confusion(tp=2, fp=1, fn=1, tn=3)
    assert confusion([]) == Confusion()


def test_metrics_by_hand():
    c = Confusion(tp=3, fp=2, fn=1, tn=2)
    # precision 3/5, recall 3/4, F1 = 2*3 / (2*3 + 2 + 1) = 6/9, accuracy (3+2)/8
    assert (precision(c), recall(c), f1(c), accuracy(c)) == (0.6, 0.75, 0.6667, 0.625)
    # F1 is the harmonic mean of precision and recall: 2 * 0.6 * 0.75 / 1.35 = 0.6667
    c = Confusion(tp=1, fp=0, fn=2, tn=0)
    assert (precision(c), recall(c), f1(c), accuracy(c)) == (1.0, 0.3333, 0.5, 0.3333)


def test_undefined_metrics_are_none_with_a_reason():
    nothing_predicted = Confusion(tp=0, fp=0, fn=2, tn=3)
    m = classification_metrics(nothing_predicted, positive="should trigger", predicted="triggered")
    # precision has no denominator; F1 = 0 / (0 + 0 + 2): every positive was missed, a real 0
    assert (m["precision"], m["recall"], m["f1"], m["accuracy"]) == (None, 0.0, 0.0, 0.6)
    assert m["undefined"] == {"precision": "no case was triggered"}

    no_positives = Confusion(tp=0, fp=1, fn=0, tn=3)
    m = classification_metrics(no_positives, positive="should trigger", predicted="triggered")
    assert (m["precision"], m["recall"], m["f1"], m["accuracy"]) == (0.0, None, 0.0, 0.75)
    assert m["undefined"] == {"recall": "no case is should trigger"}

    all_negative_and_right = Confusion(tn=4)
    m = classification_metrics(all_negative_and_right)
    assert (m["precision"], m["recall"], m["f1"], m["accuracy"]) == (None, None, None, 1.0)
    assert set(m["undefined"]) == {"precision", "recall", "f1"}

    m = classification_metrics(Confusion())
    assert (m["precision"], m["recall"], m["f1"], m["accuracy"]) == (None, None, None, None)
    assert m["undefined"]["accuracy"] == "no cases"
    assert (m["tp"], m["fp"], m["fn"], m["tn"]) == (0, 0, 0, 0)
